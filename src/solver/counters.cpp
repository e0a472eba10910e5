// Counts: integer inputs that stand for an integer-valued polynomial over indicators of several
// inputs (context.h, Context::count). A token's place in an expert's buffer is the number of
// earlier tokens routed there, a CumSum over routing masks; indexing a buffer by it needs its
// indicators [place = c], which the polynomial does not have. A count is named by the
// polynomial's canonical form (so the spec and the ranks share it, as selections are shared),
// its range is the set of values the polynomial takes on the routings the axioms allow (asked of
// CaDiCaL, value by value, through its definition in routing_sat.cpp), and evaluators compute
// it from its definition. Forms that differ by writing the polynomial or the count are told
// equal by the boolean residue, where the definition is an axiom.
#include <algorithm>
#include <set>

#include "solver/context_impl.h"
#include "solver/routing_sat.h"

namespace onnx_tv::solver {

// The rows a polynomial over indicators reads: a selection's row (its slots are one row), or a
// plain integer input (one position), through counts to their definitions.
size_t Context::rows_of(Value v) const {
  std::set<std::string> rows;
  std::vector<Value> todo = {v};
  while (!todo.empty()) {
    const Value p = todo.back();
    todo.pop_back();
    for (const auto& [m, c] : impl_->polys[p.poly].terms)
      for (const auto& [a, e] : impl_->monos[m].factors) {
        const std::string& n = impl_->atoms[a].name;
        if (const Value* def = counter(n)) {
          todo.push_back(*def);
        } else if (const Selection* s = selection(n)) {
          std::string key = (s->largest ? "L" : "S") + s->order;
          for (const Value& x : s->row) key += "," + std::to_string(x.poly);
          rows.insert(key);
        } else {
          rows.insert(n);
        }
      }
  }
  return rows.size();
}

const Value* Context::count_over_rows() const {
  return impl_->count_over_rows ? &*impl_->count_over_rows : nullptr;
}

bool Context::Impl::integer_over_indicators(uint32_t poly) const {
  for (const auto& [m, c] : polys[poly].terms) {
    if (c.to_rational().get_den() != 1) return false;
    for (const auto& [a, e] : monos[m].factors)
      if (atoms[a].fn != Fn::Ind || e != SmallRational(1)) return false;
  }
  return true;
}

std::optional<Value> Context::count(Value v, int64_t max_values) {
  if (!v.is_finite()) return std::nullopt;
  Impl& I = *impl_;
  if (!I.integer_over_indicators(v.poly)) return std::nullopt;
  mpz_class lo = 0, hi = 0;  // bounds: every indicator 0 or 1
  for (const auto& [m, c] : I.polys[v.poly].terms) {
    const Rational q = c.to_rational();
    if (I.monos[m].factors.empty() || q > 0) hi += q.get_num();
    if (I.monos[m].factors.empty() || q < 0) lo += q.get_num();
  }
  if (mpz_class(hi - lo) >= max_values) return std::nullopt;
  const std::string name = "count(" + std::to_string(v.poly) + ")";
  if (auto it = I.integer_inputs.find(name); it != I.integer_inputs.end())
    return it->second.second - it->second.first == 1 ? constant((long long)it->second.first)
                                                     : integer_input(name, it->second.first, it->second.second);
  I.counters.emplace(name, v);
  if (!I.count_over_rows && rows_of(v) > 1) I.count_over_rows = v;
  I.integer_inputs.emplace(name, std::make_pair(lo.get_si(), hi.get_si() + 1));
  // The values it takes: those some allowed routing gives it. One solver for the run's
  // counts: each adds its definition, and what CaDiCaL learnt of the others stays.
  if (!I.routing_sat) I.routing_sat = std::make_shared<RoutingSat>(*this);
  RoutingSat& sat = *I.routing_sat;
  sat.add(name);
  // The least and the greatest: from a routing's value, a routing with a value beyond it,
  // until there is none (each call a model or a proof, not one call per candidate value).
  const std::optional<int64_t> some = sat.value_except(name, {});
  ONNX_TV_ASSERT(some.has_value(), "a count that no routing gives a value: " + to_string(v));
  int64_t first = *some, last = *some;
  for (bool least : {true, false}) {
    while (true) {
      std::vector<Fact> beyond;  // the values not past the one found
      for (int64_t u = least ? first : lo.get_si(); u <= (least ? hi.get_si() : last); ++u)
        beyond.push_back({name, u});
      const std::optional<int64_t> next = sat.value_except(name, beyond);
      if (!next) break;
      (least ? first : last) = *next;
    }
  }
  I.integer_inputs[name] = {first, last + 1};
  if (first == last) return constant((long long)first);
  // A family of its own (a ranked selection's slot has one already): its indicators make
  // cases for functions of what it indexes (exclusive_cases.cpp), and keep [count = lo].
  if (!I.family_of_input.count(name))
    I.family_of_input.emplace(name, I.families.try_emplace(name, uint32_t(I.families.size() + 1)).first->second);
  return integer_input(name, first, last + 1);
}

const Value* Context::counter(const std::string& name) const {
  auto it = impl_->counters.find(name);
  return it == impl_->counters.end() ? nullptr : &it->second;
}

std::optional<IntegerFunction> Context::as_count_function(Value v, int64_t max_points) {
  const std::optional<Value> c = count(v, std::min<int64_t>(max_points, limits::kCountValues));
  if (!c) return std::nullopt;
  return as_integer_function(*c, max_points);
}

}  // namespace onnx_tv::solver
