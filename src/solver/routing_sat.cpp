// Routings as a SAT problem (routing_sat.h).
#include "solver/routing_sat.h"

#include <cadical.hpp>

#include <algorithm>

#include "solver/selection_row.h"

namespace onnx_tv::solver {

RoutingSat::RoutingSat(Context& ctx) : ctx_(ctx), solver_(std::make_unique<CaDiCaL::Solver>()) {
  solver_->set("quiet", 1);  // its messages would go to our stdout
}

RoutingSat::~RoutingSat() = default;

void RoutingSat::clause(const std::vector<int>& lits) {
  for (int l : lits) solver_->add(l);
  solver_->add(0);
  ++clauses_;
}

void RoutingSat::exactly_one(const std::vector<int>& xs) {
  clause(xs);
  at_most_one(xs);
}

// Pairwise for a few, else a sequential counter (3n clauses).
void RoutingSat::at_most_one(const std::vector<int>& xs) {
  if (xs.size() < 2) return;
  if (xs.size() <= 6) {
    for (size_t i = 0; i < xs.size(); ++i)
      for (size_t j = i + 1; j < xs.size(); ++j) clause({-xs[i], -xs[j]});
    return;
  }
  int prev = 0;  // "some earlier x holds"
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    const int s = fresh();
    clause({-xs[i], s});
    if (prev) {
      clause({-prev, s});
      clause({-xs[i], -prev});
    }
    prev = s;
  }
  clause({-xs.back(), -prev});
}

void RoutingSat::add(const std::string& input) {
  if (inputs_.count(input)) return;
  const auto range = ctx_.integer_range(input);
  ONNX_TV_ASSERT(range.has_value(), "an indicator of '" + input + "', not an integer input");
  Input in{range->first, range->second, next_};
  std::vector<int> xs;
  for (int64_t v = in.lo; v < in.hi; ++v) xs.push_back(fresh());
  inputs_.emplace(input, in);
  exactly_one(xs);
  if (const Value* def = ctx_.counter(input)) define_count(input, *def);
  if (const auto* slots = ctx_.permutation(input)) permutation(*slots);
  const Selection* s = ctx_.selection(input);
  if (!s) return;
  std::vector<std::string>& row = rows_[selection_row_key(*s)];
  for (const std::string& other : row) {
    if (ctx_.selection(other)->slot == s->slot) continue;
    const Input& o = inputs_.at(other);
    for (int64_t e = std::max(in.lo, o.lo); e < std::min(in.hi, o.hi); ++e)
      clause({-var({input, e}), -var({other, e})});
  }
  row.push_back(input);
  if (!s->order.empty()) same_set(*s);
}

// The slots of a sorted row of routed keys (ranked_selection.cpp) are a permutation of the
// row's n elements: no element in two slots, and every element in one. Both follow from the
// slots' definitions, but only by counting (a pigeonhole argument, hard for resolution), so
// they are given as the axioms they are.
void RoutingSat::permutation(const std::vector<std::pair<std::string, int64_t>>& slots) {
  if (!permutations_.insert(&slots).second) return;
  for (const auto& [name, v] : slots)
    if (!name.empty()) add(name);
  for (int64_t u = 0; u < int64_t(slots.size()); ++u) {
    std::vector<int> holders;
    bool constant = false;
    for (const auto& [name, v] : slots) {
      if (name.empty()) {
        constant = constant || v == u;
        continue;
      }
      const Input& in = inputs_.at(name);
      if (u >= in.lo && u < in.hi) holders.push_back(var({name, u}));
    }
    if (constant) {
      for (int h : holders) clause({-h});
      continue;
    }
    clause(holders);
    at_most_one(holders);
  }
}

// An unsorted TopK's k slots hold the elements of the sorted top k, in some order: each of
// its slots holds an element some sorted slot holds, and each sorted slot's element is in
// one of its slots. With distinct slots on both sides, the two sets are equal.
void RoutingSat::same_set(const Selection& s) {
  Selection sorted = s;
  sorted.order.clear();
  if (!permuted_.insert(selection_row_key(s)).second) return;
  std::vector<std::string> mine, theirs;
  std::set<int64_t> fixed;  // sorted slots of a row of constants: their elements
  for (int64_t j = 0; j < s.k; ++j) {
    Selection u = s;
    u.slot = sorted.slot = j;
    mine.push_back(ctx_.as_integer_function(ctx_.select(u))->input);
    const IntegerFunction f = *ctx_.as_integer_function(ctx_.select(sorted));
    if (f.input.empty()) fixed.insert(f.values[0].get_num().get_si());
    else theirs.push_back(f.input);
  }
  for (const auto& n : mine) add(n);
  for (const auto& n : theirs) add(n);
  // A sorted slot over routed keys is a count (ranked_selection.cpp), whose range may leave
  // out elements it never holds: "b holds e" is then false, and has no variable.
  const auto holds = [&](const std::string& b, int64_t e) {
    const Input& in = inputs_.at(b);
    return e >= in.lo && e < in.hi ? std::optional<int>(var({b, e})) : std::nullopt;
  };
  for (int64_t e = 0; e < int64_t(s.row.size()); ++e) {
    for (const std::string& a : mine) {  // a holds e: some sorted slot does
      if (fixed.count(e)) break;
      std::vector<int> lits = {-var({a, e})};
      for (const std::string& b : theirs)
        if (const auto l = holds(b, e)) lits.push_back(*l);
      clause(lits);
    }
    std::vector<int> some;  // one of mine holds e
    for (const std::string& a : mine) some.push_back(var({a, e}));
    if (fixed.count(e)) clause(some);
    for (const std::string& b : theirs) {
      const auto l = holds(b, e);
      if (!l) continue;
      std::vector<int> lits = some;
      lits.insert(lits.begin(), -*l);
      clause(lits);
    }
  }
}

// count = sum_i c_i m_i + c_0, each m_i a product of facts: y_i <-> m_i, and partial sums
// S_0 = c_0, S_i = S_{i-1} + c_i y_i, each exactly one of its values (an adder in unary, as
// wide as the sums' bounds); the count's value v holds exactly where S_n = v.
void RoutingSat::define_count(const std::string& input, Value def) {
  struct Term {
    int64_t c;
    std::vector<Fact> facts;
  };
  std::vector<Term> terms;
  int64_t lo = 0, hi = 0;  // the partial sum's bounds so far
  for (size_t i = 0, n = ctx_.poly_term_count(def.poly); i < n; ++i) {
    const TermView t = ctx_.term(def.poly, i);
    const int64_t c = t.coefficient->to_rational().get_num().get_si();
    if (t.factors.empty()) {
      lo += c, hi += c;
      continue;
    }
    Term term{c, {}};
    for (const auto& [a, e] : t.factors) {
      const AtomView av = ctx_.atom(a);
      term.facts.push_back({*av.name, av.exponent->get_num().get_si()});
    }
    terms.push_back(std::move(term));
  }
  for (const Term& t : terms)
    for (const Fact& f : t.facts) add(f.input);
  std::vector<int> sums = {fresh()};  // S_0's one value, lo == hi
  clause({sums[0]});
  for (const Term& t : terms) {
    const int y = fresh();
    std::vector<int> all_hold = {y};
    for (const Fact& f : t.facts) {
      clause({-y, var(f)});
      all_hold.push_back(-var(f));
    }
    clause(all_hold);
    const int64_t nlo = std::min(lo, lo + t.c), nhi = std::max(hi, hi + t.c);
    std::vector<int> next;
    for (int64_t u = nlo; u <= nhi; ++u) next.push_back(fresh());
    exactly_one(next);
    for (int64_t u = lo; u <= hi; ++u) {
      const int s = sums[size_t(u - lo)];
      clause({-s, y, next[size_t(u - nlo)]});
      clause({-s, -y, next[size_t(u + t.c - nlo)]});
    }
    sums = std::move(next);
    lo = nlo, hi = nhi;
  }
  const Input& in = inputs_.at(input);
  for (int64_t u = lo; u <= hi; ++u) {
    const int s = sums[size_t(u - lo)];
    if (u >= in.lo && u < in.hi) {
      clause({-s, var({input, u})});
      clause({s, -var({input, u})});
    } else {
      clause({-s});  // a value no allowed routing gives (the count's range says so)
    }
  }
  for (int64_t u = in.lo; u < in.hi; ++u)
    if (u < lo || u > hi) clause({-var({input, u})});
}

int RoutingSat::var(const Fact& f) const {
  const Input& in = inputs_.at(f.input);
  ONNX_TV_ASSERT(f.value >= in.lo && f.value < in.hi,
                 "a fact outside the range of '" + f.input + "'");
  return in.base + int(f.value - in.lo);
}

void RoutingSat::exclude(std::span<const Fact> facts) {
  std::vector<int> lits;
  for (const Fact& f : facts) lits.push_back(-var(f));
  clause(lits);
}

void RoutingSat::require_one_of(const std::vector<std::vector<Fact>>& conjunctions) {
  std::vector<int> some;
  for (const auto& c : conjunctions) {
    const int y = fresh();  // y implies every fact of c
    for (const Fact& f : c) clause({-y, var(f)});
    some.push_back(y);
  }
  clause(some);
}

int RoutingSat::solve(std::span<const int> assumptions) {
  for (int l : assumptions) solver_->assume(l);
  ++calls_;
  const int r = solver_->solve();
  ONNX_TV_ASSERT(r == 10 || r == 20, "CaDiCaL returned " + std::to_string(r) + " without a limit set");
  return r;
}

bool RoutingSat::satisfiable(std::span<const Fact> assumed, Routing* model) {
  std::vector<int> lits;
  for (const Fact& f : assumed) lits.push_back(var(f));
  if (solve(lits) != 10) return false;
  if (model) {
    model->clear();
    for (const auto& [name, in] : inputs_)
      for (int64_t v = in.lo; v < in.hi; ++v)
        if (solver_->val(in.base + int(v - in.lo)) > 0) (*model)[name] = v;
  }
  return true;
}

std::optional<int64_t> RoutingSat::value_except(const std::string& input,
                                                std::span<const Fact> not_these) {
  std::vector<int> lits;
  for (const Fact& f : not_these) lits.push_back(-var(f));
  if (solve(lits) != 10) return std::nullopt;
  const Input& in = inputs_.at(input);
  for (int64_t v = in.lo; v < in.hi; ++v)
    if (solver_->val(in.base + int(v - in.lo)) > 0) return v;
  ONNX_TV_ASSERT(false, "a model in which '" + input + "' takes no value");
  return std::nullopt;
}

bool RoutingSat::entails(std::span<const Fact> assumed, const Fact& f) {
  std::vector<int> lits;
  for (const Fact& a : assumed) lits.push_back(var(a));
  lits.push_back(-var(f));
  return solve(lits) == 20;
}

}  // namespace onnx_tv::solver
