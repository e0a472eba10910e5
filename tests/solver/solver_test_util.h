#pragma once
// Helpers for solver tests: comparisons that print both forms on failure.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "solver/context.h"

namespace onnx_tv::solver::testing {

inline ::testing::AssertionResult same_value(const char* ea, const char* eb, const Context& ctx,
                                             Value a, Value b) {
  if (a == b) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "input: " << ea << " vs " << eb
                                       << "\n  got:      " << ctx.to_string(a)
                                       << "\n  expected: " << ctx.to_string(b);
}

inline ::testing::AssertionResult prints_as(const Context& ctx, Value v, const std::string& s) {
  std::string got = ctx.to_string(v);
  if (got == s) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got: " << got << "\n  expected: " << s;
}

// Slot `slot` of the top `k` of `row` (smallest first unless `largest`).
inline Selection top(std::vector<Value> row, int64_t k, int64_t slot, bool largest = true,
                     bool ties_last = false) {
  Selection s;
  s.row = std::move(row);
  s.k = k;
  s.slot = slot;
  s.largest = largest;
  s.ties_last = ties_last;
  return s;
}

}  // namespace onnx_tv::solver::testing

#define EXPECT_SAME(ctx, a, b) \
  EXPECT_TRUE(::onnx_tv::solver::testing::same_value(#a, #b, ctx, a, b))
