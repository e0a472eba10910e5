// The boolean residue (boolean_residue.h), in two steps over the difference d = a - b with its
// definitions expanded.
//
// 1. Routings inside functions. A term whose non-indicator factors hold indicators inside
//    (relu of a buffer slot that a routing filled, exp of a selected score) is split by the
//    routings of its own coefficient's inputs, each widened to every slot of the selections it
//    touches: with C the term's coefficient over indicators and R the rest, C * R is the sum
//    over allowed routings s of [s] * C(s) * R, because the [s] of all routings sum to 1 and
//    a routing the axioms forbid has [s] = 0 everywhere. Where [s] = 1, every inner indicator
//    the axioms and s decide has its decided value, so R may be rewritten with them (a term
//    that cannot hold dropped, a fact that must hold set to 1): R_s. Both sides of a check are
//    split alike, so what the spec computes from a token and what the plan computes from the
//    buffer slot the routing put it in meet.
// 2. Coefficients. The terms, grouped by what is not an indicator, sum_R C_R * R, vanish where
//    every C_R vanishes on every allowed routing. Each C_R is a SAT problem: CaDiCaL is asked
//    for an allowed routing under which some term of C_R holds; each model is evaluated
//    exactly; a nonzero value ends the search (nothing is proven), a zero one is excluded and
//    the solver asked again. UNSAT proves C_R vanishes.
#include "solver/boolean_residue.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "solver/routing_sat.h"
#include "solver/selection_row.h"

namespace onnx_tv::solver {

void ResidueStats::add(const ResidueStats& o) {
  coefficients += o.coefficients;
  proven += o.proven;
  routings += o.routings;
  max_variables = std::max(max_variables, o.max_variables);
  max_clauses = std::max(max_clauses, o.max_clauses);
  solver_calls += o.solver_calls;
  seconds += o.seconds;
}

namespace {

using Factors = std::vector<std::pair<AtomId, SmallRational>>;

struct CoefficientTerm {
  Rational c;
  std::vector<Fact> facts;  // a product of indicators [input = value]
};

// Terms grouped by their factors that are not indicators.
struct Group {
  Factors rest;
  std::vector<CoefficientTerm> terms;
};

Rational value_at(const std::vector<CoefficientTerm>& terms, const Routing& r) {
  Rational value = 0;
  for (const auto& t : terms) {
    bool all = true;
    for (const Fact& f : t.facts) all &= r.at(f.input) == f.value;
    if (all) value += t.c;
  }
  return value;
}

std::string routing_text(Context& ctx, const Routing& r) {
  std::string out;
  for (const auto& [name, v] : r) {
    const Selection* s = ctx.selection(name);
    out += (out.empty() ? "" : ", ") +
           (!s ? name
               : "slot " + std::to_string(s->slot) +
                     (s->order.empty() ? " of a TopK row"
                                       : " of an unsorted TopK (its order left to the runtime)")) +
           " = " +
           std::to_string(v);
  }
  return out;
}

// Which atoms hold an indicator inside their arguments, and which inputs occur at all.
class Scan {
 public:
  explicit Scan(Context& ctx) : ctx_(ctx) {}
  bool inner(AtomId a) {
    if (auto it = inner_.find(a); it != inner_.end()) return it->second;
    const AtomView av = ctx_.atom(a);
    bool any = false;
    for (PolyId p : av.args) any |= poly(p);
    inner_[a] = any;
    return any;
  }
  // Whether an indicator occurs in p, at any depth; notes the inputs it meets.
  bool poly(PolyId p) {
    if (auto it = polys_.find(p); it != polys_.end()) return it->second;
    bool any = false;
    for (size_t i = 0, n = ctx_.poly_term_count(p); i < n; ++i) {
      const Factors fs(ctx_.term(p, i).factors.begin(), ctx_.term(p, i).factors.end());
      for (const auto& [a, e] : fs) {
        const AtomView av = ctx_.atom(a);
        if (av.fn == Fn::Ind) {
          any = true;
          inputs.insert(*av.name);
        } else {
          any |= inner(a);
        }
      }
    }
    polys_[p] = any;
    return any;
  }
  std::set<std::string> inputs;

 private:
  Context& ctx_;
  std::unordered_map<AtomId, bool> inner_;
  std::unordered_map<PolyId, bool> polys_;
};

std::vector<Group> group_terms(Context& ctx, Value d) {
  std::map<Factors, size_t> index;
  std::vector<Group> groups;
  for (size_t i = 0, n = ctx.poly_term_count(d.poly); i < n; ++i) {
    const TermView t = ctx.term(d.poly, i);
    CoefficientTerm ct{t.coefficient->to_rational(), {}};
    Factors rest;
    for (const auto& [atom, e] : t.factors) {
      const AtomView av = ctx.atom(atom);
      if (av.fn == Fn::Ind) ct.facts.push_back({*av.name, av.exponent->get_num().get_si()});
      else rest.emplace_back(atom, e);
    }
    auto [it, fresh] = index.try_emplace(rest, groups.size());
    if (fresh) groups.push_back({rest, {}});
    groups[it->second].terms.push_back(std::move(ct));
  }
  return groups;
}

// The product of the routing's indicators.
Value routing_value(Context& ctx, const Routing& r) {
  Value v = ctx.one();
  for (const auto& [name, value] : r) v = ctx.mul(v, ctx.indicator(name, value));
  return v;
}

// What the axioms decide inside a rest where `assumed` holds: a term whose indicators cannot
// hold with it dropped, facts it entails set to 1 (Context::TermFilter), each answer kept.
class Decider {
 public:
  Decider(Context& ctx, RoutingSat& all, std::vector<Fact> assumed)
      : ctx_(ctx), all_(all), assumed_(std::move(assumed)) {
    filter.excludes_lowest = [this](const std::string& n, std::span<const Factor> fs) {
      std::vector<Fact> own = facts_of(fs);
      own.push_back({n, ctx_.integer_range(n)->first});
      auto [it, fresh] = lowest_.try_emplace(own);
      if (fresh) it->second = !all_.satisfiable(with(own));
      return it->second;
    };
    filter.keep = [this](std::span<const Factor> fs) -> std::optional<Factors> {
      const std::vector<Fact> own = facts_of(fs);
      auto [it, fresh] = facts_.try_emplace(own);
      if (fresh && all_.satisfiable(with(own))) {
        std::vector<bool> keep;
        for (const Fact& f : own) keep.push_back(!all_.entails(assumed_, f));
        it->second = std::move(keep);
      }
      if (!it->second) return std::nullopt;
      Factors kept;
      size_t k = 0;
      for (const auto& [a, e] : fs)
        if (ctx_.atom(a).fn != Fn::Ind || (*it->second)[k++]) kept.emplace_back(a, e);
      return kept;
    };
  }
  Context::TermFilter filter;
  Context::RewriteMemo rewritten;

 private:
  using Factor = std::pair<AtomId, SmallRational>;
  std::vector<Fact> facts_of(std::span<const Factor> fs) const {
    std::vector<Fact> own;
    for (const auto& [a, e] : fs) {
      const AtomView av = ctx_.atom(a);
      if (av.fn == Fn::Ind) own.push_back({*av.name, av.exponent->get_num().get_si()});
    }
    return own;
  }
  std::vector<Fact> with(const std::vector<Fact>& own) const {
    std::vector<Fact> both = assumed_;
    both.insert(both.end(), own.begin(), own.end());
    return both;
  }
  Context& ctx_;
  RoutingSat& all_;
  std::vector<Fact> assumed_;
  std::map<std::vector<Fact>, std::optional<std::vector<bool>>> facts_;
  std::map<std::vector<Fact>, bool> lowest_;  // facts, then [n = lo]: excluded together
};

// Step 1a: a term c F R whose rest R holds indicators inside, F a conjunction of facts, is
// c F R_F, R_F being R rewritten where F holds. Where R_F still holds an indicator of some
// input n, F R = sum_v F [n = v] R (n takes one value of its range), and each F [n = v] that
// the axioms allow is taken in turn, until every rest is decided. Where both sides route a
// token alike they name the same facts, and their rests meet; only the inputs the rests need
// are split, not whole routings.
class OwnFacts {
 public:
  OwnFacts(Context& ctx, RoutingSat& all, size_t max_terms, int64_t max_cases, ResidueStats& run)
      : ctx_(ctx), all_(all), max_terms_(max_terms), max_cases_(max_cases), run_(run) {}

  // c F R as a sum of terms with decided rests, appended to `out`; false past a budget (of
  // cases per term, from begin()).
  void begin() { cases_ = 0; }
  bool expand(const Rational& c, std::vector<Fact> facts, Value rest, std::vector<Value>& out,
              std::string* why) {
    if (++cases_ > max_cases_) {
      if (why) *why = "more than " + std::to_string(max_cases_) + " cases to decide a term by";
      return false;
    }
    std::sort(facts.begin(), facts.end());
    Value r = rest;
    if (!facts.empty()) {
      Decider& decide = deciders_.try_emplace(facts, ctx_, all_, facts).first->second;
      const std::optional<Value> rs = ctx_.rewrite_terms(rest, decide.filter, max_terms_, &decide.rewritten);
      if (!rs) {
        if (why) *why = "a term rewritten under its routing exceeds the expansion budget";
        return false;
      }
      r = *rs;
    }
    const std::optional<std::string> n = undecided(facts, r);
    if (!n) {
      run_.routings += facts.empty() ? 0 : 1;
      Value v = ctx_.mul(ctx_.constant(c), r);
      for (const Fact& f : facts) v = ctx_.mul(v, ctx_.indicator(f.input, f.value));
      out.push_back(v);
      return true;
    }
    const auto [lo, hi] = *ctx_.integer_range(*n);
    for (int64_t v = lo; v < hi; ++v) {
      std::vector<Fact> more = facts;
      more.push_back({*n, v});
      if (all_.satisfiable(more) && !expand(c, std::move(more), r, out, why)) return false;
    }
    return true;
  }

 private:
  // An input whose indicators R_F still holds: first one in a row F names a slot of, else the
  // one of fewest values; nullopt where R_F is decided.
  std::optional<std::string> undecided(const std::vector<Fact>& facts, Value r) {
    Scan scan(ctx_);
    scan.poly(r.poly);
    std::optional<std::string> best;
    int64_t best_rank = 0;
    for (const std::string& n : scan.inputs) {
      if (!all_.has(n)) continue;  // (cannot happen: every inner input was added)
      const auto [lo, hi] = *ctx_.integer_range(n);
      int64_t rank = hi - lo;
      if (const Selection* s = ctx_.selection(n))
        for (const Fact& f : facts)
          if (const Selection* o = ctx_.selection(f.input); o && o->row == s->row) rank = -1;
      if (!best || rank < best_rank) best = n, best_rank = rank;
    }
    return best;
  }

  Context& ctx_;
  RoutingSat& all_;
  size_t max_terms_;
  int64_t max_cases_, cases_ = 0;
  ResidueStats& run_;
  std::map<std::vector<Fact>, Decider> deciders_;
};

// A coefficient is written with each input's lowest value eliminated ([n = lo] is 1 minus the
// others), so a term m may stand for m [n = lo] once its partners m [n = v] are subtracted.
// Rewriting m's rest under m alone would part it from theirs. Here every term names a value of
// every input the coefficient holds: m = sum_v m [n = v] over n's range, the parts merged with
// the terms already there (so partners cancel), conjunctions the axioms forbid dropped (they are
// 0 on every allowed routing). False past `max_terms` terms.
bool complete_facts(Context& ctx, RoutingSat& all, std::vector<CoefficientTerm>& terms,
                    size_t max_terms) {
  std::set<std::string> inputs;
  for (const auto& t : terms)
    for (const Fact& f : t.facts) inputs.insert(f.input);
  std::map<std::vector<Fact>, Rational> poly;
  for (auto& t : terms) {
    std::sort(t.facts.begin(), t.facts.end());
    poly[t.facts] += t.c;
  }
  std::map<std::vector<Fact>, bool> allowed;
  auto holds = [&](const std::vector<Fact>& facts) {
    auto [it, fresh] = allowed.try_emplace(facts);
    if (fresh) it->second = all.satisfiable(facts);
    return it->second;
  };
  for (const std::string& n : inputs) {
    const auto [lo, hi] = *ctx.integer_range(n);
    std::map<std::vector<Fact>, Rational> next;
    for (const auto& [facts, c] : poly) {
      if (c == 0) continue;
      bool has = false;
      for (const Fact& f : facts) has |= f.input == n;
      if (has) {  // a conjunction the canonical form kept, such as two slots at one element
        if (holds(facts)) next[facts] += c;
        continue;
      }
      for (int64_t v = lo; v < hi; ++v) {
        std::vector<Fact> more = facts;
        more.push_back({n, v});
        std::sort(more.begin(), more.end());
        if (holds(more)) next[more] += c;
      }
      if (next.size() > max_terms) return false;
    }
    poly = std::move(next);
  }
  terms.clear();
  for (const auto& [facts, c] : poly)
    if (c != 0) terms.push_back({c, facts});
  return true;
}

std::optional<Value> rewrite_under_own_facts(Context& ctx, Value d, Scan& scan, RoutingSat& all,
                                             size_t max_terms, int64_t max_cases,
                                             ResidueStats& run, std::string* why) {
  OwnFacts own(ctx, all, max_terms, max_cases, run);
  std::vector<Value> out;
  for (const Group& g : group_terms(ctx, d)) {
    bool inner = false;
    for (const auto& [a, e] : g.rest) inner |= scan.inner(a);
    const Value rest = ctx.product_of(g.rest);
    std::vector<CoefficientTerm> terms = g.terms;
    if (inner && !complete_facts(ctx, all, terms, size_t(max_cases))) {
      if (why) *why = "more than " + std::to_string(max_cases) + " routings in a coefficient";
      return std::nullopt;
    }
    for (const auto& t : terms) {
      if (inner) {
        own.begin();
        if (!own.expand(t.c, t.facts, rest, out, why)) return std::nullopt;
        continue;
      }
      Value v = ctx.mul(ctx.constant(t.c), rest);
      for (const Fact& f : t.facts) v = ctx.mul(v, ctx.indicator(f.input, f.value));
      out.push_back(v);
    }
  }
  return ctx.expand_definitions(ctx.sum(out), max_terms);
}

// Step 1b (see the top of this file): d with every term whose rest holds indicators inside
// split by routings and rewritten under each; nullopt past a budget (`why` says which).
std::optional<Value> split_inner_routings(Context& ctx_, Value d, Scan& scan, RoutingSat& all,
                                          size_t max_terms_, int64_t max_calls_,
                                          ResidueStats& run, std::string* why) {
  std::map<std::vector<Fact>, Decider> decided;  // by routing
  std::vector<Value> out;
  for (const Group& g : group_terms(ctx_, d)) {
    bool split = false;
    for (const auto& [a, e] : g.rest) split |= scan.inner(a);
    if (!split) {
      for (const auto& t : g.terms) {
        Value v = ctx_.mul(ctx_.constant(t.c), ctx_.product_of(g.rest));
        for (const Fact& f : t.facts) v = ctx_.mul(v, ctx_.indicator(f.input, f.value));
        out.push_back(v);
      }
      continue;
    }
    // The routings of the coefficient's inputs, of every slot of their selections, and of the
    // inputs the counts among them are defined over (the problem holds those too).
    std::set<std::string> support;
    for (const auto& t : g.terms)
      for (const Fact& f : t.facts) support.insert(f.input);
    for (const std::string& n : scan.inputs)
      if (const Selection* s = ctx_.selection(n))
        for (const std::string& m : std::set<std::string>(support))
          if (const Selection* o = ctx_.selection(m);
              o && selection_row_key(*o) == selection_row_key(*s))
            support.insert(n);
    RoutingSat cases(ctx_);
    for (const std::string& n : support) cases.add(n);
    const Value rest = ctx_.product_of(g.rest);
    Routing r;
    int64_t count = 0;
    while (cases.satisfiable({}, &r)) {
      if (++count > max_calls_) {
        if (why) *why = "more than " + std::to_string(max_calls_) + " routings to split a term by";
        return std::nullopt;
      }
      std::vector<Fact> facts;
      for (const auto& [n, v] : r) facts.push_back({n, v});
      cases.exclude(facts);
      const Rational c = value_at(g.terms, r);
      if (c == 0) continue;
      ++run.routings;
      Decider& decide = decided.try_emplace(facts, ctx_, all, facts).first->second;
      const std::optional<Value> rs = ctx_.rewrite_terms(rest, decide.filter, max_terms_, &decide.rewritten);
      if (!rs) {
        if (why) *why = "a term split by routings exceeds the expansion budget";
        return std::nullopt;
      }
      out.push_back(ctx_.mul(ctx_.mul(ctx_.constant(c), routing_value(ctx_, r)), *rs));
    }
    run.max_variables = std::max(run.max_variables, cases.variables());
    run.max_clauses = std::max(run.max_clauses, cases.clauses());
    run.solver_calls += cases.calls();
  }
  // Products of a routing with a large rewritten rest were made definitions (context.h): the
  // coefficients must be visible to group by them.
  std::optional<Value> plain = ctx_.expand_definitions(ctx_.sum(out), max_terms_);
  if (!plain && why) *why = "a term split by routings exceeds the expansion budget";
  return plain;
}

// Step 2: whether the coefficient vanishes on every allowed routing.
bool vanishes(Context& ctx_, const std::vector<CoefficientTerm>& terms, int64_t max_calls_,
              ResidueStats& run, std::string* why) {
  RoutingSat p(ctx_);
  Rational constant = 0;
  std::set<std::string> own_inputs;
  for (const auto& t : terms) {
    if (t.facts.empty()) constant += t.c;
    for (const Fact& f : t.facts) {
      p.add(f.input);
      own_inputs.insert(f.input);
    }
  }
  // Unless C has a constant term, it is 0 where no term holds.
  if (constant == 0) {
    std::vector<std::vector<Fact>> some;
    for (const auto& t : terms)
      if (!t.facts.empty()) some.push_back(t.facts);
    p.require_one_of(some);
  }
  Routing r;
  bool result = false;
  int64_t call = 0;
  for (; call < max_calls_; ++call) {
    if (!p.satisfiable({}, &r)) {
      result = true;
      break;
    }
    const Rational value = value_at(terms, r);
    if (value != 0) {
      if (why)
        *why = "the forms differ by " + value.get_str() +
               " (times further factors) under the routing " + routing_text(ctx_, r) +
               ", which the routing axioms allow; no input values realising it were found";
      break;
    }
    // The value reads only the terms' inputs: every routing that agrees on them is zero too.
    std::vector<Fact> facts;
    for (const auto& [n, v] : r)
      if (own_inputs.count(n)) facts.push_back({n, v});
    p.exclude(facts);
  }
  if (call == max_calls_ && why)
    *why = "CaDiCaL ruled out " + std::to_string(max_calls_) +
           " routings of one coefficient without settling it (the budget)";
  run.max_variables = std::max(run.max_variables, p.variables());
  run.max_clauses = std::max(run.max_clauses, p.clauses());
  run.solver_calls += p.calls();
  return result;
}

// Step 2 over every group of d: whether each coefficient vanishes (those in `vanishing` are
// known to).
bool coefficients_vanish(Context& ctx, Value d, std::unordered_set<PolyId>& vanishing,
                         int64_t max_calls, ResidueStats& run, std::string* why) {
  std::vector<Group> groups = group_terms(ctx, d);
  for (const Group& g : groups) {
    bool some_fact = false;
    for (const auto& t : g.terms) some_fact |= !t.facts.empty();
    if (!some_fact) {
      if (why) *why = "the forms differ in a term that holds no indicator";
      return false;
    }
  }
  for (const Group& g : groups) {
    std::vector<Value> parts;  // the coefficient's canonical form names it in the cache
    for (const auto& t : g.terms) {
      Value m = ctx.constant(t.c);
      for (const Fact& f : t.facts) m = ctx.mul(m, ctx.indicator(f.input, f.value));
      parts.push_back(m);
    }
    const Value c = ctx.sum(parts);
    if (vanishing.count(c.poly)) continue;
    ++run.coefficients;
    if (!vanishes(ctx, g.terms, max_calls, run, why)) return false;
    ++run.proven;
    vanishing.insert(c.poly);
  }
  return true;
}

}  // namespace

BooleanResidue::BooleanResidue(Context& ctx, size_t max_terms, int64_t max_calls)
    : ctx_(ctx), max_terms_(max_terms), max_calls_(max_calls) {}

bool BooleanResidue::equal(Value a, Value b, std::string* why) {
  auto fail = [&](const std::string& s) {
    if (why) *why = s;
    return false;
  };
  if (!a.is_finite() || !b.is_finite()) return fail("");
  std::optional<Value> d = ctx_.expand_definitions(ctx_.sub(a, b), max_terms_);
  if (!d) return fail("");
  if (*d == ctx_.zero()) return true;
  bool outer = false, inner = false;
  Scan scan(ctx_);
  for (size_t i = 0, n = ctx_.poly_term_count(d->poly); i < n; ++i)
    for (const auto& [atom, e] : ctx_.term(d->poly, i).factors) {
      if (ctx_.atom(atom).fn == Fn::Ind) outer = true;
      else inner |= scan.inner(atom);
    }
  if (!outer && !inner) return fail("");  // no routing involved: nothing for SAT
  const auto start = std::chrono::steady_clock::now();
  ResidueStats run;
  bool equal = false;
  // Step 2 alone holds whatever the rests are: where every coefficient vanishes on every
  // allowed routing, so does d. With routings inside the rests, it is tried first, and step 1
  // (a rewrite per term, costlier) only where it leaves a coefficient.
  if (!inner) {
    equal = coefficients_vanish(ctx_, *d, vanishing_, max_calls_, run, why);
  } else if (coefficients_vanish(ctx_, *d, vanishing_, max_calls_, run, nullptr)) {
    equal = true;
  } else {
    scan.poly(d->poly);
    RoutingSat all(ctx_);  // every input of d: decides the inner indicators where facts hold
    for (const std::string& n : scan.inputs) all.add(n);
    // Step 1a first; where a coefficient is left, step 1b splits further by whole routings.
    // A rest rewritten under a routing may divide by a value that routing makes 0 (a
    // normaliser of gates it sets to 0): the forms say nothing there, and nothing is proven.
    try {
      std::optional<Value> own =
          rewrite_under_own_facts(ctx_, *d, scan, all, max_terms_, max_calls_, run, why);
      if (own) equal = coefficients_vanish(ctx_, *own, vanishing_, max_calls_, run, why);
      if (own && !equal) {
        std::optional<Value> split =
            split_inner_routings(ctx_, *own, scan, all, max_terms_, max_calls_, run, why);
        if (split) equal = coefficients_vanish(ctx_, *split, vanishing_, max_calls_, run, why);
      }
    } catch (const MathError& e) {
      equal = fail(std::string("under a routing the axioms allow, a rewritten term divides by "
                               "zero (") + e.what() + ")");
    }
    run.max_variables = std::max(run.max_variables, all.variables());
    run.max_clauses = std::max(run.max_clauses, all.clauses());
    run.solver_calls += all.calls();
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats_.add(run);
  ctx_.residue_stats().add(run);
  return equal;
}

}  // namespace onnx_tv::solver
