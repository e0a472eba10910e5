#include "solver/common_monomial.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace onnx_tv::solver {

namespace {

std::vector<uint32_t> monomials(const Context& ctx, Value v) {
  std::vector<uint32_t> out;
  for (size_t i = 0, n = ctx.poly_term_count(v.poly); i < n; ++i)
    out.push_back(ctx.term(v.poly, i).monomial);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool share_a_monomial(const Context& ctx, std::span<const Value> values) {
  if (values.empty()) return false;
  for (Value v : values)
    if (!v.is_finite()) return false;
  std::vector<uint32_t> common = monomials(ctx, values[0]);
  for (size_t k = 1; k < values.size() && !common.empty(); ++k) {
    const std::vector<uint32_t> mine = monomials(ctx, values[k]);
    std::vector<uint32_t> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  return !common.empty();
}

}  // namespace onnx_tv::solver
