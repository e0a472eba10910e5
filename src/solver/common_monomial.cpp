#include "solver/common_monomial.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace onnx_tv::solver {

bool CommonTerms::add(Value v) {
  if (!v.is_finite()) {  // infinities hold no term
    common_.clear();
    first_ = false;
    return false;
  }
  std::vector<Term> mine;
  for (size_t i = 0, n = ctx_.poly_term_count(v.poly); i < n; ++i) {
    const TermView t = ctx_.term(v.poly, i);
    mine.emplace_back(t.monomial, with_coefficients_ ? t.coefficient : nullptr);
  }
  std::sort(mine.begin(), mine.end(), by_monomial);
  if (first_) {
    common_ = std::move(mine);
    first_ = false;
    return !common_.empty();
  }
  // A merge walk: both are sorted by monomial.
  std::vector<Term> both;
  auto m = mine.begin();
  for (const Term& t : common_) {
    while (m != mine.end() && m->first < t.first) ++m;
    if (m == mine.end()) break;
    if (m->first == t.first && (!t.second || *t.second == *m->second)) both.push_back(t);
  }
  common_ = std::move(both);
  return !common_.empty();
}

namespace {

bool share(const Context& ctx, std::span<const Value> values, bool with_coefficients) {
  if (values.empty()) return false;
  CommonTerms common(ctx, with_coefficients);
  for (Value v : values)
    if (!common.add(v)) return false;
  return true;
}

}  // namespace

bool share_a_monomial(const Context& ctx, std::span<const Value> values) {
  return share(ctx, values, false);
}

bool share_a_term(const Context& ctx, std::span<const Value> values) {
  return share(ctx, values, true);
}

}  // namespace onnx_tv::solver
