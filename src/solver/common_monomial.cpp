#include "solver/common_monomial.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace onnx_tv::solver {

namespace {

// A value's terms as (monomial, coefficient), sorted by monomial; `with_coefficients` false
// leaves every coefficient null.
using Term = std::pair<uint32_t, const SmallRational*>;

std::vector<Term> terms(const Context& ctx, Value v, bool with_coefficients) {
  std::vector<Term> out;
  for (size_t i = 0, n = ctx.poly_term_count(v.poly); i < n; ++i) {
    const TermView t = ctx.term(v.poly, i);
    out.emplace_back(t.monomial, with_coefficients ? t.coefficient : nullptr);
  }
  std::sort(out.begin(), out.end(), [](const Term& a, const Term& b) { return a.first < b.first; });
  return out;
}

bool share(const Context& ctx, std::span<const Value> values, bool with_coefficients) {
  if (values.empty()) return false;
  for (Value v : values)
    if (!v.is_finite()) return false;
  std::vector<Term> common = terms(ctx, values[0], with_coefficients);
  auto same = [](const Term& a, const Term& b) {
    return a.first == b.first && (!a.second || *a.second == *b.second);
  };
  for (size_t k = 1; k < values.size() && !common.empty(); ++k) {
    const std::vector<Term> mine = terms(ctx, values[k], with_coefficients);
    std::vector<Term> both;
    for (const Term& t : common) {
      auto it = std::lower_bound(mine.begin(), mine.end(), t,
                                 [](const Term& a, const Term& b) { return a.first < b.first; });
      if (it != mine.end() && same(t, *it)) both.push_back(t);
    }
    common = std::move(both);
  }
  return !common.empty();
}

}  // namespace

bool share_a_monomial(const Context& ctx, std::span<const Value> values) {
  return share(ctx, values, false);
}

bool share_a_term(const Context& ctx, std::span<const Value> values) {
  return share(ctx, values, true);
}

}  // namespace onnx_tv::solver
