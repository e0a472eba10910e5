// Sorted selections over integer keys a routing decides: the argsort of a rank's (token,
// top-k slot) pairs by expert, TopK(smallest, sorted) over the keys expert * N + pair, and
// the argsort of that order (its inverse). As an opaque selection (selections.cpp) the order
// would be unrelated to the experts: nothing would say that the pair in sorted place j is
// routed to the expert whose buffer place j fills. Here the slot is written as what it is:
//
//   rank_q = #{q' : q' is ahead of q}       (ahead: a smaller key, or an equal key and a
//                                            lower index; larger keys with `largest`, higher
//                                            indices with `ties_last`)
//   slot j holds q  <=>  rank_q = j,        so the slot's element is sum_q q [rank_q = j],
//
// which is selected_element's own rule (the element with exactly `slot` elements ahead of it),
// so it holds at every point. Each "q' ahead of q" is a 0/1 function of the few inputs the
// two keys depend on, written as a sum of products of their indicators over the joint values
// where it holds (or, for keys over many inputs, through a count of the keys' difference);
// rank_q and the slot's element are counts (counters.cpp), whose definitions CaDiCaL knows.
// The slots of one row hold distinct elements, so they form a family (indicators.cpp), as an
// opaque selection's slots do.
#include <map>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

// [q' ahead of q], from the difference d = key_q - key_q' (ascending order): d > 0, or d = 0
// where the tie rule puts q' first. nullopt where it cannot be written.
std::optional<Value> Context::Impl::ahead(const Selection& s, int64_t q_prime, int64_t q) {
  const Value d = ctx.sub(s.row[size_t(q)], s.row[size_t(q_prime)]);
  const bool tie_first = s.ties_last ? q_prime > q : q_prime < q;
  const auto holds = [&](const Rational& dv) {
    const int c = sgn(dv) * (s.largest ? -1 : 1);
    return c > 0 || (c == 0 && tie_first);
  };
  if (const std::optional<Rational> r = ctx.as_rational(d)) return holds(*r) ? ctx.one() : ctx.zero();
  // The inputs d reads, with their ranges.
  std::map<std::string, std::pair<int64_t, int64_t>> inputs;
  for (const auto& [m, c] : polys[d.poly].terms)
    for (const auto& [a, e] : monos[m].factors) inputs.emplace(atoms[a].name, integer_inputs.at(atoms[a].name));
  int64_t joint = 1;
  for (const auto& [n, r] : inputs) {
    joint *= r.second - r.first;
    if (joint > limits::kRankedJointValues) break;
  }
  if (joint > limits::kRankedJointValues) {
    const std::optional<IntegerFunction> f = ctx.as_integer_function(d);
    if (!f) return std::nullopt;
    std::vector<Value> hits;
    for (const Rational& v : f->values) hits.push_back(holds(v) ? ctx.one() : ctx.zero());
    return ctx.from_integer_function(f->input, f->lo, hits);
  }
  // Every joint value: d there, and the product of the inputs' indicators where it holds.
  const std::vector<Term> terms = polys[d.poly].terms;  // a copy: building grows the store
  std::vector<std::pair<std::string, int64_t>> at;      // the current joint value
  for (const auto& [n, r] : inputs) at.emplace_back(n, r.first);
  std::vector<Value> parts;
  while (true) {
    Rational dv = 0;
    for (const auto& [m, c] : terms) {
      bool all = true;
      for (const auto& f : monos[m].factors) {
        const AtomNode& ind = atoms[f.first];
        const auto it = std::find_if(at.begin(), at.end(), [&](auto& p) { return p.first == ind.name; });
        all = all && it->second == ind.exponent.get_num().get_si();
      }
      if (all) dv += c.to_rational();
    }
    if (holds(dv)) {
      Value p = ctx.one();
      for (const auto& [n, v] : at) p = ctx.mul(p, ctx.indicator(n, v));
      parts.push_back(p);
    }
    size_t i = 0;  // the next joint value, the last input fastest
    for (i = at.size(); i-- > 0;) {
      if (++at[i].second < inputs.at(at[i].first).second) break;
      at[i].second = inputs.at(at[i].first).first;
    }
    if (i == size_t(-1)) break;
  }
  return ctx.sum(parts);
}

// The elements of a row of routed keys at every slot: sum_q q [rank_q = slot].
std::optional<std::vector<Value>> Context::Impl::ranked_elements(const Selection& s) {
  const int64_t n = int64_t(s.row.size());
  std::vector<IntegerFunction> ranks;
  for (int64_t q = 0; q < n; ++q) {
    std::vector<Value> ahead_of_q;
    for (int64_t q2 = 0; q2 < n; ++q2) {
      if (q2 == q) continue;
      const std::optional<Value> a = ahead(s, q2, q);
      if (!a) return std::nullopt;
      ahead_of_q.push_back(*a);
    }
    std::optional<IntegerFunction> rank = ctx.as_integer_function(ctx.sum(ahead_of_q));
    if (!rank) return std::nullopt;
    ranks.push_back(std::move(*rank));
  }
  std::vector<Value> elements;
  for (int64_t slot = 0; slot < n; ++slot) {
    std::vector<Value> at_slot;
    for (int64_t q = 0; q < n; ++q) {
      std::vector<Value> hits;
      for (const Rational& v : ranks[size_t(q)].values)
        hits.push_back(v == Rational((long)slot) ? ctx.one() : ctx.zero());
      at_slot.push_back(ctx.mul(ctx.constant((long long)q),
                                ctx.from_integer_function(ranks[size_t(q)].input, ranks[size_t(q)].lo, hits)));
    }
    elements.push_back(ctx.sum(at_slot));
  }
  return elements;
}

// A row that is the slots of a permutation in slot order (the order of an argsort, sorted
// again to find its inverse): slot p of its ascending sort holds the j whose slot holds p
// (descending: n - 1 - p), sum_j j [O_j = p]. No comparison is written, and none asked of
// CaDiCaL, which would have to rediscover that the order is a permutation.
std::optional<std::vector<Value>> Context::Impl::inverse_elements(const Selection& s) {
  // Element j must be slot j's own value (not a function of it) of one permutation family.
  const std::vector<std::pair<std::string, int64_t>>* perm = nullptr;
  std::vector<std::string> slots;
  for (const Value& v : s.row) {
    std::optional<IntegerFunction> f = ctx.as_integer_function(v);
    if (!f || f->input.empty()) return std::nullopt;
    const auto p = permutation_of_input.find(f->input);
    if (p == permutation_of_input.end()) return std::nullopt;
    if (!perm) perm = &permutations.at(p->second);
    const size_t j = slots.size();
    if (perm->size() != s.row.size() || (*perm)[j].first != f->input) return std::nullopt;
    for (size_t k = 0; k < f->values.size(); ++k)
      if (f->values[k] != Rational((long)(f->lo + int64_t(k)))) return std::nullopt;
    slots.push_back(f->input);
  }
  const int64_t n = int64_t(s.row.size());
  std::vector<Value> elements;
  for (int64_t p = 0; p < n; ++p) {
    std::vector<Value> at;
    for (int64_t j = 0; j < n; ++j)
      at.push_back(ctx.mul(ctx.constant((long long)j), ctx.indicator(slots[size_t(j)], s.largest ? n - 1 - p : p)));
    elements.push_back(ctx.sum(at));
  }
  return elements;
}

std::optional<Value> Context::Impl::ranked_selection(const Selection& s) {
  // Every slot of the row is made (n^2 comparisons): longer rows stay opaque selections.
  if (s.row.size() > size_t(limits::kRankedRow)) return std::nullopt;
  // Every key a polynomial with integer coefficients over indicators, each to the power 1.
  for (const Value& v : s.row)
    if (!v.is_finite() || !integer_over_indicators(v.poly)) return std::nullopt;
  // The family of the row's slots, named as an opaque selection's is, marked as ranked.
  std::string family = std::string("ranked:") + (s.largest ? "top" : "bottom") +
                       (s.ties_last ? "l" : "") + "(";
  for (size_t i = 0; i < s.row.size(); ++i) family += (i ? "," : "") + std::to_string(s.row[i].poly);
  family += ")";
  if (!permutations.count(family)) {
    std::optional<std::vector<Value>> elements = inverse_elements(s);
    if (!elements) elements = ranked_elements(s);
    if (!elements) return std::nullopt;
    // Every slot, each a count (or a constant), registered in the family before the count
    // makes its indicators (a count made before keeps its indicators as they are).
    const auto fam = families.try_emplace(family, uint32_t(families.size() + 1)).first->second;
    std::vector<std::pair<std::string, int64_t>> slots;
    for (const Value& e : *elements) {
      if (const std::optional<Rational> r = ctx.as_rational(e)) {
        slots.emplace_back("", r->get_num().get_si());
        continue;
      }
      const std::string name = "count(" + std::to_string(e.poly) + ")";
      if (!integer_inputs.count(name)) family_of_input.try_emplace(name, fam);
      const std::optional<Value> c = ctx.count(e);
      if (!c) return std::nullopt;
      if (const std::optional<Rational> r = ctx.as_rational(*c)) slots.emplace_back("", r->get_num().get_si());
      else slots.emplace_back(name, 0);
    }
    for (const auto& [name, v] : slots)
      if (!name.empty()) permutation_of_input.emplace(name, family);
    permutations.emplace(family, std::move(slots));
  }
  const auto& [name, v] = permutations.at(family)[size_t(s.slot)];
  if (name.empty()) return ctx.constant((long long)v);
  const auto [lo, hi] = integer_inputs.at(name);
  return ctx.integer_input(name, lo, hi);
}

const std::vector<std::pair<std::string, int64_t>>* Context::permutation(const std::string& input) const {
  const auto it = impl_->permutation_of_input.find(input);
  return it == impl_->permutation_of_input.end() ? nullptr : &impl_->permutations.at(it->second);
}

}  // namespace onnx_tv::solver
