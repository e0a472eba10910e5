#pragma once
// How one axis of a spec input was reduced, as the report shows it (check/result.h).
#include <cstdint>
#include <string>
#include <vector>

namespace onnx_tv::reduce {

// One factor of a spec input dimension in the reduced instance.
struct ReducedFactor {
  int64_t full = 0, reduced = 0;
  std::string why;  // why it keeps its full size; "" when reduced
};

struct ReducedDim {
  std::string value;  // a spec input (or a constant table the reduction made one)
  int64_t axis = 0;
  int64_t full = 0, reduced = 0;
  std::vector<ReducedFactor> factors;
};

}  // namespace onnx_tv::reduce
