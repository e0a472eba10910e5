// Case analysis on max, min and abs atoms (see equal_by_cases in context.h). Canonical forms
// never split an extreme into cases, so relu(x) - relu(-x) and x stay different forms although
// they are one function. Here the difference d = a - b is examined case by case: each of the
// extreme atoms among d's factors takes one of its arguments (max(p, q) is p where p >= q, q
// where q >= p; abs(p) is p where p >= 0, -p where p <= 0), which covers every point, and d is
// rebuilt with those choices. a = b when every case gives zero, or is shown empty by its own
// conditions (a negative constant, two conditions adding up to one), or gives zero once the
// equalities its conditions force (c >= 0 and -c >= 0) are solved for a symbol. Only exact
// rationals decide a case: a case left undecided leaves the whole undecided.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "solver/context_impl.h"
#include "common/limits.h"

namespace onnx_tv::solver {

namespace {

constexpr size_t kMaxAtoms = limits::kCaseSplitAtoms;  // extreme atoms split at once
constexpr size_t kMaxCases = limits::kCaseSplitCases;  // combinations of their choices
constexpr size_t kMaxTerms = limits::kCaseSplitTerms;  // a rebuilt form past this gives up
constexpr size_t kMaxDifference = limits::kCaseSplitDifference;  // a difference past this is not split

bool is_extreme(Fn fn) { return fn == Fn::Max || fn == Fn::Min || fn == Fn::Abs; }

// Rebuilds values with some atoms replaced: each factor a^e of a term becomes value(a)^e.
// Atoms inside other atoms' arguments are left as they are: replacing only some occurrences
// of an atom by a value it equals where the case holds is still exact there. (Templates over
// the store, Context::Impl, which only Context's own members may name.)
template <class Impl>
class Rebuild {
 public:
  using Lookup = std::function<std::optional<Value>(AtomId)>;
  Rebuild(Context& ctx, Impl& impl, Lookup lookup)
      : ctx_(ctx), impl_(impl), lookup_(std::move(lookup)) {}

  // nullopt past the term budget or on a fractional power of a replaced atom.
  std::optional<Value> operator()(Value v) {
    if (!v.is_finite()) return v;
    if (auto it = memo_.find(v.poly); it != memo_.end()) return it->second;
    std::vector<Value> parts;
    const auto terms = impl_.polys[v.poly].terms;  // a copy: building may grow the store
    for (const Term& t : terms) {
      Value m = ctx_.constant(t.second.to_rational());
      const auto factors = impl_.monos[t.first].factors;
      for (const Factor& f : factors) {
        std::optional<Value> r = lookup_(f.first);
        Value x;
        if (!r) {
          x = impl_.value_of_atom(f.first, f.second);
        } else {
          if (!f.second.is_integer()) return std::nullopt;
          x = ctx_.pow(*r, ctx_.constant(f.second.to_rational()));
        }
        m = ctx_.mul(m, x);
        if (ctx_.term_count(m) > kMaxTerms) return std::nullopt;
      }
      parts.push_back(m);
    }
    Value out = ctx_.sum(parts);
    if (ctx_.term_count(out) > kMaxTerms) return std::nullopt;
    memo_.emplace(v.poly, out);
    return out;
  }

 private:
  Context& ctx_;
  Impl& impl_;
  Lookup lookup_;
  std::unordered_map<PolyId, Value> memo_;
};

// c = k * s + r with s a symbol that occurs nowhere else in c: s = -r / k.
template <class Impl>
std::optional<std::pair<AtomId, Value>> solve_for_symbol(Context& ctx, Impl& impl, Value c) {
  if (!c.is_finite()) return std::nullopt;
  const auto& terms = impl.polys[c.poly].terms;
  std::map<AtomId, int> uses;  // terms each symbol occurs in, as a factor
  for (const Term& t : terms)
    for (const Factor& f : impl.monos[t.first].factors) ++uses[f.first];
  for (const Term& t : terms) {
    const auto& fs = impl.monos[t.first].factors;
    if (fs.size() != 1 || fs[0].second != SmallRational(1)) continue;
    const AtomId s = fs[0].first;
    if (impl.atoms[s].fn != Fn::Symbol || uses[s] != 1) continue;
    // Arguments of other atoms may hold s too; then it is not solved here.
    bool inside = false;
    for (const Term& u : terms)
      for (const Factor& f : impl.monos[u.first].factors)
        if (impl.atoms[f.first].fn != Fn::Symbol && (impl.atoms[f.first].flags & kHasSymbol))
          inside = true;
    if (inside) continue;
    const Value ks = impl.term_value(t.first, t.second);
    const Value rest = ctx.sub(c, ks);
    return std::make_pair(s, ctx.div(ctx.neg(rest), ctx.constant(t.second.to_rational())));
  }
  return std::nullopt;
}

bool negative_constant(Context& ctx, Value v) {
  auto r = ctx.as_rational(v);
  return r && *r < 0;
}

// Whether the case with conditions `conds` (each >= 0 where the case holds) makes d zero:
// empty, or zero once the equalities the conditions force are substituted.
template <class Impl>
bool case_holds(Context& ctx, Impl& impl, Value d, std::vector<Value> conds) {
  for (size_t round = 0; round <= conds.size(); ++round) {
    if (d == ctx.zero()) return true;
    for (const Value& c : conds)
      if (negative_constant(ctx, c)) return true;
    std::optional<std::pair<AtomId, Value>> solved;
    for (size_t i = 0; i < conds.size() && !solved; ++i)
      for (size_t j = i + 1; j < conds.size() && !solved; ++j) {
        const Value both = ctx.add(conds[i], conds[j]);
        if (negative_constant(ctx, both)) return true;
        if (both == ctx.zero()) solved = solve_for_symbol(ctx, impl, conds[i]);
      }
    if (!solved) return false;
    Rebuild<Impl> sub(ctx, impl, [&](AtomId a) -> std::optional<Value> {
      if (a == solved->first) return solved->second;
      return std::nullopt;
    });
    auto nd = sub(d);
    if (!nd) return false;
    d = *nd;
    for (Value& c : conds) {
      auto nc = sub(c);
      if (!nc) return false;
      c = *nc;
    }
  }
  return d == ctx.zero();
}

// The body of equal_by_cases on d = a - b; `fail` records why not and returns false.
template <class Impl, class Fail>
bool split_cases(Context& ctx, Impl& im, Value d, const Fail& fail) {
  if (d == ctx.zero()) return true;
  std::vector<AtomId> split;  // the extreme atoms among d's factors, and nested in their args
  std::vector<PolyId> todo = {d.poly};
  std::unordered_map<PolyId, bool> seen;
  while (!todo.empty()) {
    const PolyId p = todo.back();
    todo.pop_back();
    if (!seen.emplace(p, true).second) continue;
    for (const Term& t : im.polys[p].terms)
      for (const Factor& f : im.monos[t.first].factors) {
        const AtomNode& n = im.atoms[f.first];
        if (!is_extreme(n.fn) || std::find(split.begin(), split.end(), f.first) != split.end())
          continue;
        split.push_back(f.first);
        if (split.size() > kMaxAtoms)
          return fail("case analysis splits at most " + std::to_string(kMaxAtoms) +
                      " max/min/abs atoms, and the difference holds more");
        todo.insert(todo.end(), n.args.begin(), n.args.end());  // nested extremes
      }
  }
  if (split.empty()) return fail("");
  if (ctx.term_count(d) > kMaxDifference)
    return fail("the difference holds " + std::to_string(ctx.term_count(d)) +
                " terms, more than case analysis takes on (" + std::to_string(kMaxDifference) +
                ")");
  // Each atom's choices: the index of the argument it takes (abs: 0 is p, 1 is -p).
  std::vector<size_t> arity;
  size_t cases = 1;
  for (AtomId s : split) {
    const AtomNode& n = im.atoms[s];
    arity.push_back(n.fn == Fn::Abs ? 2 : n.args.size());
    cases *= arity.back();
    if (cases > kMaxCases)
      return fail("case analysis on " + std::to_string(split.size()) +
                  " max/min/abs atoms would take more than " + std::to_string(kMaxCases) +
                  " cases");
  }
  std::vector<size_t> choice(split.size(), 0);
  for (size_t k = 0; k < cases; ++k) {
    size_t rest = k;  // k in the mixed radix of the arities
    for (size_t i = 0; i < split.size(); ++i) {
      choice[i] = rest % arity[i];
      rest /= arity[i];
    }
    std::unordered_map<AtomId, Value> chosen;
    std::function<std::optional<Value>(AtomId)> lookup;
    Rebuild<Impl> rebuild(ctx, im, [&](AtomId a) { return lookup(a); });
    lookup = [&](AtomId a) -> std::optional<Value> {
      auto at = std::find(split.begin(), split.end(), a);
      if (at == split.end()) return std::nullopt;
      if (auto it = chosen.find(a); it != chosen.end()) return it->second;
      const bool abs = im.atoms[a].fn == Fn::Abs;  // copied: rebuilding may grow the store
      const size_t c = choice[size_t(at - split.begin())];
      const Value arg{im.atoms[a].args[abs ? 0 : c], 0};
      std::optional<Value> v = rebuild(arg);
      if (!v) return std::nullopt;
      if (abs && c == 1) v = ctx.neg(*v);
      chosen.emplace(a, *v);
      return v;
    };
    // Where the case holds: the chosen argument is the extreme one (each condition >= 0).
    std::vector<Value> conds;
    bool too_big = false;
    for (size_t i = 0; i < split.size() && !too_big; ++i) {
      const Fn fn = im.atoms[split[i]].fn;  // copied: rebuilding may grow the store
      const std::vector<PolyId> args = im.atoms[split[i]].args;
      auto arg = [&](size_t j) { return rebuild(Value{args[j], 0}); };
      if (fn == Fn::Abs) {
        auto p = arg(0);
        if (!p) too_big = true;
        else conds.push_back(choice[i] == 0 ? *p : ctx.neg(*p));
        continue;
      }
      auto mine = arg(choice[i]);
      for (size_t j = 0; j < args.size() && mine; ++j) {
        if (j == choice[i]) continue;
        auto other = arg(j);
        if (!other) break;
        conds.push_back(fn == Fn::Max ? ctx.sub(*mine, *other) : ctx.sub(*other, *mine));
      }
      if (!mine) too_big = true;
    }
    std::optional<Value> dk = too_big ? std::nullopt : rebuild(d);
    if (!dk) return fail("a case of the case analysis grows past " + std::to_string(kMaxTerms) +
                         " terms");
    if (!case_holds(ctx, im, *dk, conds)) {
      std::string where;
      for (size_t i = 0; i < split.size(); ++i) {
        const Value atom = im.value_of_atom(split[i], 1);
        where += (i ? ", " : "") + ctx.to_string(atom) + " = " + ctx.to_string(*lookup(split[i]));
      }
      return fail("split into cases on the signs in its max/min/abs atoms, the case " + where +
                  " still leaves the difference " + ctx.to_string(*dk));
    }
  }
  return true;
}

}  // namespace

bool Context::equal_by_cases(Value a, Value b, std::string* why_not) {
  auto fail = [&](const std::string& why) {
    if (why_not) *why_not = why;
    return false;
  };
  if (!a.is_finite() || !b.is_finite()) return fail("");
  try {
    return split_cases(*this, *impl_, sub(a, b), fail);
  } catch (const MathError& e) {  // a case divides by its argument where it is zero
    return fail("a case of the case analysis is undefined: " + e.message());
  }
}

}  // namespace onnx_tv::solver
