#pragma once
// How one axis of a spec input was reduced, as the report shows it (check/result.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx_tv::reduce {

// One factor of a spec input dimension in the reduced instance.
struct ReducedFactor {
  int64_t full = 0, reduced = 0;
  std::string why;  // why it keeps its full size; "" when reduced
  bool operator==(const ReducedFactor&) const = default;
};

struct ReducedDim {
  std::string value;  // a spec input (or a constant table the reduction made one) or output
  int64_t axis = 0;
  int64_t full = 0, reduced = 0;
  std::vector<ReducedFactor> factors;  // major first
  bool operator==(const ReducedDim&) const = default;
};

// The full-size position that position `reduced_pos` of the reduced axis `d` stands for: the
// same digit on every factor. The reduced instance keeps the first positions of each factor
// (the first ranks of a mesh axis, the first micro-batches: DimStore::reduced_position is the
// inverse on boundaries), so its element [i] is the full program's element with those
// digits. nullopt when reduced_pos is outside the axis or the factors do not make up `d`.
inline std::optional<int64_t> full_position(const ReducedDim& d, int64_t reduced_pos) {
  int64_t full = 1, reduced = 1;
  for (const ReducedFactor& f : d.factors) {
    if (f.reduced < 1 || f.reduced > f.full) return std::nullopt;
    full *= f.full;
    reduced *= f.reduced;
  }
  if (full != d.full || reduced != d.reduced || reduced_pos < 0 || reduced_pos >= reduced)
    return std::nullopt;
  int64_t out = 0, rest = reduced_pos;
  for (const ReducedFactor& f : d.factors) {
    reduced /= f.reduced;
    full /= f.full;
    out += rest / reduced * full;
    rest %= reduced;
  }
  return out;
}

}  // namespace onnx_tv::reduce
