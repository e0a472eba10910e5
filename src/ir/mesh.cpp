// The device mesh: a rank's mesh coordinate is its row-major index in the mesh shape, so the
// last axis varies fastest (plan-format section 4).
#include <algorithm>

#include "common/checked.h"
#include "ir/plan.h"

namespace onnx_tv::ir {

std::vector<int64_t> Mesh::coords(int64_t rank) const {
  std::vector<int64_t> c(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    c[i] = rank % shape[i];
    rank /= shape[i];
  }
  return c;
}

int64_t Mesh::rank_of(const std::vector<int64_t>& c) const {
  ONNX_TV_ASSERT(c.size() == shape.size(), "mesh coordinate of the wrong length");
  int64_t r = 0;
  for (size_t i = 0; i < shape.size(); ++i) r = r * shape[i] + c[i];
  return r;
}

int64_t Mesh::axis_index(const std::string& name) const {
  auto it = std::find(axes.begin(), axes.end(), name);
  return it == axes.end() ? -1 : int64_t(it - axes.begin());
}

}  // namespace onnx_tv::ir
