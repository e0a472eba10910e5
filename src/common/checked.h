#pragma once
// Sizes and counts read from input files (dimensions, world sizes, mesh shapes, byte lengths)
// are multiplied and added before anything is allocated; a product that wraps would make a
// huge input look small. These helpers say when the exact result does not fit.
#include <cstdint>
#include <optional>

namespace onnx_tv {

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace onnx_tv
