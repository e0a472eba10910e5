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

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "solver/routing_sat.h"

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
           (s ? "slot " + std::to_string(s->slot) + " of a TopK row" : name) + " = " +
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

// Step 1 (see the top of this file): d with every term whose rest holds indicators inside split
// by routings and rewritten under each; nullopt past a budget (`why` says which).
std::optional<Value> split_inner_routings(Context& ctx_, Value d, size_t max_terms_,
                                          int64_t max_calls_, ResidueStats& run,
                                          std::string* why) {
  Scan scan(ctx_);
  bool inner = false;
  for (size_t i = 0, n = ctx_.poly_term_count(d.poly); i < n; ++i)
    for (const auto& [a, e] : ctx_.term(d.poly, i).factors)
      if (ctx_.atom(a).fn != Fn::Ind) inner |= scan.inner(a);
  if (!inner) return d;
  scan.poly(d.poly);
  RoutingSat all(ctx_);  // every input of d: decides the inner indicators under a routing
  for (const std::string& n : scan.inputs) all.add(n);
  // By routing: what the rest's atoms became, and what each conjunction of facts inside them
  // was decided to be (nullopt: it cannot hold; else the facts it keeps).
  struct Decided {
    Context::RewriteMemo rewritten;
    std::map<std::vector<Fact>, std::optional<std::vector<bool>>> facts;
    std::map<std::vector<Fact>, bool> lowest;  // facts, then [n = lo]: excluded together
  };
  std::map<std::vector<Fact>, Decided> decided;
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
          if (const Selection* o = ctx_.selection(m); o && o->row == s->row &&
                                                      o->largest == s->largest &&
                                                      o->ties_last == s->ties_last)
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
      // The rest under this routing: inner terms that cannot hold dropped, facts that must
      // hold set to 1.
      Decided& known = decided[facts];
      auto facts_of = [&](std::span<const std::pair<AtomId, SmallRational>> fs) {
        std::vector<Fact> own;
        for (const auto& [a, e] : fs) {
          const AtomView av = ctx_.atom(a);
          if (av.fn == Fn::Ind) own.push_back({*av.name, av.exponent->get_num().get_si()});
        }
        return own;
      };
      Context::TermFilter decide;
      decide.excludes_lowest = [&](const std::string& n,
                                   std::span<const std::pair<AtomId, SmallRational>> fs) {
        std::vector<Fact> own = facts_of(fs);
        own.push_back({n, ctx_.integer_range(n)->first});
        auto [it, fresh] = known.lowest.try_emplace(own);
        if (fresh) {
          std::vector<Fact> assumed = facts;
          assumed.insert(assumed.end(), own.begin(), own.end());
          it->second = !all.satisfiable(assumed);
        }
        return it->second;
      };
      decide.keep = [&](std::span<const std::pair<AtomId, SmallRational>> fs) -> std::optional<Factors> {
        std::vector<Fact> own;
        for (const auto& [a, e] : fs) {
          const AtomView av = ctx_.atom(a);
          if (av.fn == Fn::Ind) own.push_back({*av.name, av.exponent->get_num().get_si()});
        }
        auto [it, fresh] = known.facts.try_emplace(own);
        if (fresh) {
          std::vector<Fact> assumed = facts;
          assumed.insert(assumed.end(), own.begin(), own.end());
          if (all.satisfiable(assumed)) {
            std::vector<bool> keep;
            for (const Fact& f : own) keep.push_back(!all.entails(facts, f));
            it->second = std::move(keep);
          }
        }
        if (!it->second) return std::nullopt;
        Factors kept;
        size_t k = 0;
        for (const auto& [a, e] : fs)
          if (ctx_.atom(a).fn != Fn::Ind || (*it->second)[k++]) kept.emplace_back(a, e);
        return kept;
      };
      const std::optional<Value> rs = ctx_.rewrite_terms(rest, decide, max_terms_, &known.rewritten);
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
  run.max_variables = std::max(run.max_variables, all.variables());
  run.max_clauses = std::max(run.max_clauses, all.clauses());
  run.solver_calls += all.calls();
  return ctx_.sum(out);
}

// Step 2: whether the coefficient vanishes on every allowed routing.
bool vanishes(Context& ctx_, const std::vector<CoefficientTerm>& terms, int64_t max_calls_,
              ResidueStats& run, std::string* why) {
  RoutingSat p(ctx_);
  Rational constant = 0;
  for (const auto& t : terms) {
    if (t.facts.empty()) constant += t.c;
    for (const Fact& f : t.facts) p.add(f.input);
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
    std::vector<Fact> facts;
    for (const auto& [n, v] : r) facts.push_back({n, v});
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
  bool any = false;
  for (size_t i = 0, n = ctx_.poly_term_count(d->poly); i < n && !any; ++i)
    for (const auto& [atom, e] : ctx_.term(d->poly, i).factors) any |= ctx_.atom(atom).fn == Fn::Ind;
  if (!any) {  // a routing may still hide inside functions
    Scan scan(ctx_);
    any = scan.poly(d->poly);
  }
  if (!any) return fail("");  // no routing involved: nothing for SAT
  const auto start = std::chrono::steady_clock::now();
  ResidueStats run;
  bool equal = false;
  std::optional<Value> split = split_inner_routings(ctx_, *d, max_terms_, max_calls_, run, why);
  if (split) {
    std::vector<Group> groups = group_terms(ctx_, *split);
    equal = true;
    for (const Group& g : groups) {
      bool some_fact = false;
      for (const auto& t : g.terms) some_fact |= !t.facts.empty();
      if (!some_fact) {
        equal = fail("the forms differ in a term that holds no indicator");
        break;
      }
    }
    for (size_t k = 0; k < groups.size() && equal; ++k) {
      std::vector<Value> parts;  // the coefficient's canonical form names it in the cache
      for (const auto& t : groups[k].terms) {
        Value m = ctx_.constant(t.c);
        for (const Fact& f : t.facts) m = ctx_.mul(m, ctx_.indicator(f.input, f.value));
        parts.push_back(m);
      }
      const Value c = ctx_.sum(parts);
      if (vanishing_.count(c.poly)) continue;
      ++run.coefficients;
      if (!vanishes(ctx_, groups[k].terms, max_calls_, run, why)) {
        equal = false;
        break;
      }
      ++run.proven;
      vanishing_.insert(c.poly);
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats_.add(run);
  ctx_.residue_stats().add(run);
  return equal;
}

}  // namespace onnx_tv::solver
