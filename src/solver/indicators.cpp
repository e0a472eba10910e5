// Indicators of integer inputs. An integer input n known to lie in [lo, hi) (a token id below
// the vocabulary size, a label below the class count) is the polynomial
// lo + sum_{v > lo} (v - lo) [n = v], where the indicator [n = v] is 1 where n = v and 0
// elsewhere. The algebra the canonical form keeps: [n = v]^2 = [n = v], [n = v][n = w] = 0 for
// v != w, and [n = lo] = 1 - sum_{v > lo} [n = v], so [n = lo] never occurs. Two slots of one
// selection (one row, order and tie rule) hold different elements, so [s = e][t = e] = 0 for
// two such slots s and t: an identity on the inputs' domain, as the others are. A selection's
// slot keeps [s = lo] as an atom instead of eliminating it, so that rule holds at lo too; its
// values at lo are then written with it (from_integer_function), and sum_v [s = v] = 1 is no
// longer a rule of the form: a form holding it and one holding 1 differ (the boolean residue
// still knows it, as an axiom), which costs completeness, not soundness. Products of
// indicators of distinct inputs at values above lo, times monomials of the other atoms, are
// then linearly independent as functions (a basis of the functions of finitely many integer
// inputs), so equal functions have equal forms and a form's terms are what it depends on.
#include <algorithm>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

bool Context::Impl::exclusive(AtomId x, AtomId y) const {
  const AtomNode& a = atoms[x];
  const AtomNode& b = atoms[y];
  if (a.fn != Fn::Ind || b.fn != Fn::Ind || x == y) return false;
  if (a.name == b.name) return true;  // one input, two values
  return a.family != 0 && a.family == b.family && a.exponent == b.exponent;  // two slots, one element
}

bool Context::Impl::exclusive_indicators(std::span<const Factor> factors) const {
  for (size_t i = 0; i < factors.size(); ++i) {
    if (atoms[factors[i].first].fn != Fn::Ind) continue;
    for (size_t j = i + 1; j < factors.size(); ++j)
      if (exclusive(factors[i].first, factors[j].first)) return true;
  }
  return false;
}

std::optional<Value> Context::Impl::expand_indicators(const Term& t) {
  const std::vector<Factor>& factors = monos[t.first].factors;
  bool any = false;
  for (const auto& [a, e] : factors) any |= atoms[a].fn == Fn::Ind;
  if (!any) return std::nullopt;
  std::vector<Factor> out;
  std::vector<AtomId> inputs;
  bool changed = false;
  for (const auto& [a, e] : factors) {
    if (atoms[a].fn != Fn::Ind) {
      out.emplace_back(a, e);
      continue;
    }
    if (e.sign() < 0)
      throw MathError("division by the indicator [" + atoms[a].name + " = " +
                      solver::to_string(atoms[a].exponent) + "], which is 0 where " +
                      atoms[a].name + " takes another value");
    for (AtomId b : inputs)
      if (exclusive(a, b)) return ctx.zero();  // one input, two values; or two slots, one element
    inputs.push_back(a);
    changed |= e != SmallRational(1);
    out.emplace_back(a, SmallRational(1));
  }
  if (!changed) return std::nullopt;  // irregular for another reason
  return make({Term{intern_mono(std::move(out)), t.second}});
}

Value Context::integer_input(const std::string& name, int64_t lo, int64_t hi) {
  if (hi <= lo) throw InternalError("integer input '" + name + "' with an empty range");
  auto [it, fresh] = impl_->integer_inputs.try_emplace(name, lo, hi);
  if (!fresh && it->second != std::make_pair(lo, hi))
    throw InternalError("integer input '" + name + "' declared with two ranges");
  std::vector<Value> terms{constant((long long)lo)};
  for (int64_t v = lo + 1; v < hi; ++v)
    terms.push_back(mul(constant((long long)(v - lo)), indicator(name, v)));
  return sum(terms);
}

Value Context::indicator(const std::string& name, int64_t v) {
  auto it = impl_->integer_inputs.find(name);
  if (it == impl_->integer_inputs.end())
    throw InternalError("indicator of '" + name + "', which is not an integer input");
  const auto [lo, hi] = it->second;
  if (v < lo || v >= hi) return zero();
  // A selection's slot keeps [s = lo] as an atom (see the header): eliminated, two slots at
  // the lowest element would make (1 - sum_v [s = v])(1 - sum_v [t = v]), whose product is 0
  // only through the slot rule at every other value and one more fact no rule of the form
  // states, so a mask of two slots would not be its own square.
  if (v == lo && !impl_->family_of_input.count(name)) {
    std::vector<Value> terms{one()};
    for (int64_t w = lo + 1; w < hi; ++w) terms.push_back(neg(indicator(name, w)));
    return sum(terms);
  }
  AtomNode n;
  n.fn = Fn::Ind;
  n.name = name;
  n.exponent = Rational((long)v);
  const AtomId id = impl_->intern_atom(std::move(n));
  // A selection's indicator is a function of its row (selections.cpp): evaluators go through
  // the row, never take it for an exact input.
  if (impl_->selections.count(name) || impl_->counters.count(name))
    impl_->atoms[id].flags |= kHasFunction;
  if (auto f = impl_->family_of_input.find(name); f != impl_->family_of_input.end()) {
    impl_->atoms[id].family = f->second;
    impl_->atoms[id].flags |= kSelectionFactor;
  }
  return impl_->value_of_atom(id, SmallRational(1));
}

ResidueStats& Context::residue_stats() { return impl_->residue_stats; }

std::optional<std::pair<int64_t, int64_t>> Context::integer_range(const std::string& name) const {
  auto it = impl_->integer_inputs.find(name);
  if (it == impl_->integer_inputs.end()) return std::nullopt;
  return it->second;
}

std::optional<IntegerFunction> Context::as_integer_function(Value v, int64_t max_points) {
  if (!v.is_finite()) return std::nullopt;
  const Impl& I = *impl_;
  // Definitions (large factors, stage cuts) stand for polynomials: read them expanded.
  bool defined = false;
  for (const auto& [m, c] : I.polys[v.poly].terms)
    for (const auto& [a, e] : I.monos[m].factors) defined |= I.atoms[a].fn == Fn::Def;
  if (defined) {
    const std::optional<Value> x = expand_definitions(v, size_t(std::min<int64_t>(max_points, 1 << 16)) * 4 + 64);
    if (!x || *x == v) return std::nullopt;
    return as_integer_function(*x, max_points);
  }
  IntegerFunction f;
  Rational base = 0;
  std::vector<std::pair<int64_t, Rational>> at;  // (value, coefficient of its indicator)
  for (const auto& [m, c] : I.polys[v.poly].terms) {
    const auto& fs = I.monos[m].factors;
    if (fs.empty()) {
      base = c.to_rational();
      continue;
    }
    if (fs.size() != 1 || I.atoms[fs[0].first].fn != Fn::Ind) return as_count_function(v, max_points);
    const AtomNode& a = I.atoms[fs[0].first];
    if (f.input.empty()) f.input = a.name;
    else if (f.input != a.name) return as_count_function(v, max_points);  // several inputs
    at.emplace_back(a.exponent.get_num().get_si(), c.to_rational());
  }
  if (f.input.empty()) {
    f.values = {base};
    return f;
  }
  const auto [lo, hi] = I.integer_inputs.at(f.input);
  if (hi - lo > max_points) return std::nullopt;
  f.lo = lo;
  f.values.assign(size_t(hi - lo), base);
  for (const auto& [u, c] : at) f.values[size_t(u - lo)] += c;
  return f;
}

Value Context::from_integer_function(const std::string& input, int64_t lo,
                                     std::span<const Value> values) {
  if (input.empty()) return values.empty() ? zero() : values[0];
  if (impl_->family_of_input.count(input) &&
      std::any_of(values.begin(), values.end(), [&](Value x) { return x != values[0]; })) {
    std::vector<Value> terms;  // a selection: sum_k [s = lo + k] values[k], lo included
    for (size_t k = 0; k < values.size(); ++k)
      if (values[k] != zero()) terms.push_back(mul(indicator(input, lo + int64_t(k)), values[k]));
    // Indexed by a count, the element meets the facts of what it picks (routing_prune.cpp).
    return impl_->counters.count(input) ? impl_->prune_routings(sum(terms)) : sum(terms);
  }
  std::vector<Value> terms{values[0]};
  for (size_t k = 1; k < values.size(); ++k) {
    if (values[k] == values[0]) continue;
    terms.push_back(mul(indicator(input, lo + int64_t(k)), sub(values[k], values[0])));
  }
  return sum(terms);
}

}  // namespace onnx_tv::solver
