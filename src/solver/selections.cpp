// Selections (TopK, ArgMax, ArgMin). Slot j of the top k of a row is an integer input s of its
// own over the row's indices, so the indicator algebra of indicators.cpp applies unchanged:
// [s = e]^2 = [s = e], [s = e][s = f] = 0 for e != f (one element per slot), and
// [s = 0] = 1 - sum_{e > 0} [s = e] (some element is in every slot). Each is an identity of the
// true selection, so equal forms still mean equal functions. Relations between slots (no
// element in two slots) and with the row's values (the slots' order) are not rules of the
// form: forms that agree only through them differ, and what decides them is a witness (the
// evaluators compute each selection from its row at a point) or nothing (UNKNOWN).
//
// A selection is named by its row's canonical forms (value ids of this Context), its order
// and its slot: a TopK node of the spec and one of a rank over the same canonical row get the
// same input, as the same function of the inputs (congruence). A TopK with sorted=0 has an
// order of its own per evaluation (Selection::order) and k in its name: its slots are a
// permutation, unknown, of the sorted top k (the axiom routing_sat.h gives CaDiCaL).
#include <algorithm>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

std::optional<int64_t> selected_element(
    const Selection& s, const std::function<std::optional<int>(int64_t, int64_t)>& sign) {
  const int64_t n = int64_t(s.row.size());
  for (int64_t e = 0; e < n; ++e) {
    int64_t before = 0;  // the elements ahead of e
    bool certain = true;
    for (int64_t f = 0; f < n && certain; ++f) {
      if (f == e) continue;
      const std::optional<int> c = sign(f, e);
      if (!c) certain = false;
      else if (*c != 0) before += (s.largest ? *c > 0 : *c < 0) ? 1 : 0;
      else before += (s.ties_last ? f > e : f < e) ? 1 : 0;
    }
    if (certain && before == s.slot) return e;
  }
  return std::nullopt;
}

Value Context::select(const Selection& s) {
  const int64_t n = int64_t(s.row.size());
  if (s.k < 1 || s.k > n || s.slot < 0 || s.slot >= s.k)
    throw InternalError("a selection of slot " + std::to_string(s.slot) + " of the top " +
                        std::to_string(s.k) + " of " + std::to_string(n) + " elements");
  std::vector<Rational> constants;
  for (const Value& v : s.row) {
    if (!v.is_finite())
      throw Unsupported("a TopK or ArgMax over a row holding an infinity is not modeled");
    if (auto r = as_rational(v)) constants.push_back(*r);
  }
  if (int64_t(constants.size()) == n && s.order.empty()) {  // unsorted: the order is not known
    const std::optional<int64_t> e = selected_element(s, [&](int64_t a, int64_t b) {
      return std::optional<int>(cmp(constants[size_t(a)], constants[size_t(b)]));
    });
    ONNX_TV_ASSERT(e.has_value(), "the selection of a row of rationals is certain");
    return constant((long long)*e);
  }
  if (s.order.empty())
    if (std::optional<Value> ranked = impl_->ranked_selection(s)) return *ranked;
  // Slot j's element does not depend on k: a TopK of 2 and one of 4 over one row (or an
  // ArgMax and a TopK's first slot) share it. An unsorted slot does (the set is the top k).
  std::string name = std::string(s.largest ? "top" : "bottom") + (s.ties_last ? "l" : "") +
                     (s.order.empty() ? "" : "~" + s.order + "/" + std::to_string(s.k)) + "#" +
                     std::to_string(s.slot) + "(";
  for (size_t i = 0; i < s.row.size(); ++i) name += (i ? "," : "") + std::to_string(s.row[i].poly);
  name += ")";
  // The family: the name without its slot (and without k, which only an unsorted order's
  // name holds): distinct slots of one family hold distinct elements.
  const size_t hash_at = name.find('#'), row_at = name.find('(', hash_at);
  const std::string family = name.substr(0, hash_at) + name.substr(row_at);
  const auto fam = impl_->families.try_emplace(family, uint32_t(impl_->families.size() + 1)).first;
  impl_->family_of_input.try_emplace(name, fam->second);
  impl_->selections.try_emplace(name, s);
  return integer_input(name, 0, n);
}

std::string Context::fresh_order() { return "u" + std::to_string(impl_->orders++); }

const Selection* Context::selection(const std::string& name) const {
  auto it = impl_->selections.find(name);
  return it == impl_->selections.end() ? nullptr : &it->second;
}

}  // namespace onnx_tv::solver
