// Definitions: def(p) atoms that keep large products unexpanded, and their expansion for a
// final comparison (see the note on definitions in context.h).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

Value Context::Impl::define(Value v) {
  if (!v.is_finite() || polys[v.poly].terms.size() <= 1) return v;
  const Primitive& pr = primitive(v.poly);
  const Rational c = pr.c;
  const MonoId m = pr.m;
  AtomId d = definition_atom(pr.rest);
  return term_value(mono_mul(m, mono_of_atom(d, 1)), SmallRational(c));
}

AtomId Context::Impl::definition_atom(PolyId rest) {
  AtomNode n;
  n.fn = Fn::Def;
  n.args = {rest};
  return intern_atom(std::move(n));
}

void Context::set_define_above(size_t terms) { impl_->define_above = terms; }

namespace {

// Every step returns nothing once the expansion passes its budget ("too big"), and callers
// pass that on: giving up only means the caller stays UNKNOWN.
using Expanded = std::optional<Value>;

class Expander {
 public:
  Expander(Context& ctx, size_t max_terms, std::unordered_map<PolyId, Value>& polys,
           std::unordered_map<AtomId, Value>& atoms, std::unordered_set<PolyId>& too_big,
           const Context::TermFilter* filter = nullptr)
      : ctx_(ctx), max_(max_terms), polys_(polys), atoms_(atoms), too_big_(too_big),
        filter_(filter) {}

  Expanded poly(PolyId p) {
    if (auto it = polys_.find(p); it != polys_.end()) return it->second;
    if (too_big_.count(p)) return std::nullopt;
    Expanded out = expand_terms(p);
    if (out) polys_[p] = *out;
    else too_big_.insert(p);  // a polynomial whose expansion gave up gives up at once next time
    return out;
  }

 private:
  using Factors = Context::Factors;

  // Where the filter excludes an input's lowest value beside a term m with partners
  // m [n = v] (v > lo), m's lowest value is restored (see Context::rewrite_terms). Any split of
  // m's coefficient is exact: c m = (c - a) m + a m [n = lo] + a sum_{v > lo} m [n = v], and
  // a m [n = lo] is 0 there. First, for each such input, a is what cancels its partners (the
  // coefficient most of them share, negated): a mask [s0 = lo] + [s1 = lo] of two slots, 2 m -
  // sum m [s0 = v] - sum m [s1 = v], vanishes so. Then what is left of m on a count goes to
  // its partners whole (a = the rest of c), so no term is left without the count's fact.
  void restore_lowest(std::vector<std::pair<Rational, Factors>>& ts) {
    std::map<Factors, Rational> poly;
    std::set<std::string> inputs;
    for (const auto& [c, fs] : ts) {
      poly[fs] += c;
      for (const auto& [a, e] : fs)
        if (ctx_.atom(a).fn == Fn::Ind) inputs.insert(*ctx_.atom(a).name);
    }
    for (const bool whole : {false, true})
      for (const std::string& n : inputs) {
        const auto [lo, hi] = *ctx_.integer_range(n);
        if (hi - lo > limits::kRestoredRange || (whole && !ctx_.counter(n))) continue;
        std::vector<AtomId> value_atom;  // [n = v] for v in (lo, hi)
        for (int64_t v = lo + 1; v < hi; ++v)
          value_atom.push_back(ctx_.term(ctx_.indicator(n, v).poly, 0).factors[0].first);
        std::map<Factors, bool> partnered;  // m (without n): whether some m [n = v] is there
        for (const auto& [fs, c] : poly) {
          if (c == 0) continue;
          Factors rest;
          bool with = false;
          for (const auto& f : fs) {
            const AtomView av = ctx_.atom(f.first);
            if (av.fn == Fn::Ind && *av.name == n) with = true;
            else rest.push_back(f);
          }
          partnered[rest] |= with;
        }
        for (const auto& entry : partnered) {
          const Factors& m = entry.first;  // (a plain reference: lambdas below capture it)
          auto it = poly.find(m);
          if (!entry.second || it == poly.end() || it->second == 0 ||
              !filter_->excludes_lowest(n, m))
            continue;
          auto partner = [&](size_t i) {
            Factors fs = m;
            fs.emplace_back(value_atom[i], SmallRational(1));
            std::sort(fs.begin(), fs.end());
            return fs;
          };
          Rational a = it->second;
          if (!whole) {
            std::map<Rational, size_t> votes;
            for (size_t i = 0; i < value_atom.size(); ++i) {
              auto p = poly.find(partner(i));
              ++votes[p == poly.end() ? Rational(0) : p->second];
            }
            a = -std::max_element(votes.begin(), votes.end(), [](const auto& x, const auto& y) {
                   return x.second < y.second;
                 })->first;
            if (a == 0) continue;
          }
          poly[m] -= a;
          for (size_t i = 0; i < value_atom.size(); ++i) poly[partner(i)] += a;
        }
      }
    ts.clear();
    for (auto& [fs, c] : poly)
      if (c != 0) ts.emplace_back(c, fs);
  }

  Expanded expand_terms(PolyId p) {
    std::vector<Value> terms;
    // Copy the views: building values below may move the store they point into.
    std::vector<std::pair<Rational, Factors>> ts;
    for (size_t i = 0, n = ctx_.poly_term_count(p); i < n; ++i) {
      const TermView tv = ctx_.term(p, i);
      ts.emplace_back(tv.coefficient->to_rational(), Factors(tv.factors.begin(), tv.factors.end()));
    }
    if (filter_ && filter_->excludes_lowest) restore_lowest(ts);
    for (auto& [coef, factors] : ts) {
      if (filter_ && has_indicator(factors)) {
        std::optional<Factors> kept = filter_->keep(factors);
        if (!kept) continue;  // the term is 0
        factors = std::move(*kept);
      }
      Value t = ctx_.constant(coef);
      for (const auto& [a, e] : factors) {
        Expanded f = power(a, e);
        if (!f ||
            double(ctx_.term_count(t)) * double(ctx_.term_count(*f)) > 16.0 * double(max_))
          return std::nullopt;
        Expanded product = within(ctx_.mul(t, *f));
        if (!product) return std::nullopt;
        t = *product;
      }
      terms.push_back(t);
    }
    return within(ctx_.sum(terms));
  }

  bool has_indicator(std::span<const std::pair<AtomId, SmallRational>> factors) const {
    for (const auto& f : factors)
      if (ctx_.atom(f.first).fn == Fn::Ind) return true;
    return false;
  }

  Expanded within(Value v) const {
    if (ctx_.term_count(v) > max_) return std::nullopt;
    return v;
  }

  Expanded power(AtomId a, const SmallRational& small_e) {
    const Rational e = small_e.to_rational();
    AtomView av = ctx_.atom(a);
    const Fn fn = av.fn;
    if (fn == Fn::Symbol || fn == Fn::Ind) return ctx_.pow(atom_value(a), ctx_.constant(e));
    if (fn == Fn::Exp) {  // exp(t)^q = exp(q t), rational q included
      const PolyId arg = av.args[0];
      Expanded x = poly(arg);
      if (!x) return std::nullopt;
      Expanded scaled = within(ctx_.mul(ctx_.constant(e), *x));
      if (!scaled) return std::nullopt;
      return ctx_.exp(*scaled);
    }
    Expanded base = apply(a);
    if (!base || e == 1) return base;
    if (e > 1 && e.get_den() == 1 && !power_fits(ctx_.term_count(*base), e.get_num().get_si()))
      return std::nullopt;
    return within(ctx_.pow(*base, ctx_.constant(e)));
  }

  // A power of a sum has up to C(n + e - 1, e) terms: give up before building one that is
  // certain to be far beyond the budget (cancellation cannot bring it back below in practice,
  // and giving up only means UNKNOWN).
  bool power_fits(size_t n, long e) const {
    double bound = 1;
    for (long k = 1; k <= e; ++k) {
      bound = bound * double(n + size_t(k) - 1) / double(k);
      if (bound > 16.0 * double(max_)) return false;
    }
    return true;
  }

  Value atom_value(AtomId a) {
    AtomView av = ctx_.atom(a);
    ONNX_TV_ASSERT(av.fn == Fn::Symbol || av.fn == Fn::Ind, "atom_value of a function atom");
    if (av.fn == Fn::Ind) return ctx_.indicator(*av.name, av.exponent->get_num().get_si());
    return ctx_.symbol(*av.name);
  }

  // The atom's function applied to its expanded arguments.
  Expanded apply(AtomId a) {
    if (auto it = atoms_.find(a); it != atoms_.end()) return it->second;
    AtomView av = ctx_.atom(a);
    const Fn fn = av.fn;
    const std::vector<PolyId> args(av.args.begin(), av.args.end());
    const Rational exponent = av.exponent ? *av.exponent : Rational(0);
    std::vector<Value> xs;
    for (PolyId p : args) {
      Expanded x = poly(p);
      // Applying a function (an inverse above all, which looks for cancellation) to a large
      // expanded argument costs far more than its size: past this, give up (UNKNOWN).
      if (!x || (fn != Fn::Def && ctx_.term_count(*x) > max_ / 64)) return std::nullopt;
      xs.push_back(*x);
    }
    Value out;
    switch (fn) {
      case Fn::Def: out = xs[0]; break;
      case Fn::Log: out = ctx_.log(xs[0]); break;
      case Fn::Sqrt: out = ctx_.sqrt(xs[0]); break;
      case Fn::Inv: out = ctx_.recip(xs[0]); break;
      case Fn::Erf: out = ctx_.erf(xs[0]); break;
      case Fn::Sin: out = ctx_.sin(xs[0]); break;
      case Fn::Cos: out = ctx_.cos(xs[0]); break;
      case Fn::Abs: out = ctx_.abs(xs[0]); break;
      case Fn::Max: out = ctx_.max(xs); break;
      case Fn::Min: out = ctx_.min(xs); break;
      case Fn::Pow: out = ctx_.pow(xs[0], ctx_.constant(exponent)); break;
      case Fn::Exp: out = ctx_.exp(xs[0]); break;
      case Fn::Symbol:
      case Fn::Ind: out = atom_value(a); break;
    }
    if (!within(out)) return std::nullopt;
    atoms_[a] = out;
    return out;
  }

  Context& ctx_;
  size_t max_;
  // Shared across calls (held by the Context): expansions are exact, so they stay valid.
  std::unordered_map<PolyId, Value>& polys_;
  std::unordered_map<AtomId, Value>& atoms_;
  std::unordered_set<PolyId>& too_big_;
  const Context::TermFilter* filter_;
};

}  // namespace

namespace {

// Products built while it lives expand fully (no new definitions).
struct NoDefinitions {
  explicit NoDefinitions(bool& flag) : flag_(flag), saved_(flag) { flag = false; }
  ~NoDefinitions() { flag_ = saved_; }
  bool& flag_;
  bool saved_;
};

}  // namespace

std::optional<Value> Context::expand_definitions(Value v, size_t max_terms) {
  if (!v.is_finite()) return v;
  NoDefinitions plain(impl_->defining);
  Impl& I = *impl_;
  if (I.expand_budget != max_terms) {  // "too big" depends on the budget
    I.expand_too_big.clear();
    I.expand_budget = max_terms;
  }
  return Expander(*this, max_terms, I.expanded_polys, I.expanded_atoms, I.expand_too_big)
      .poly(v.poly);
}

std::optional<Value> Context::rewrite_terms(Value v, const TermFilter& filter, size_t max_terms,
                                            RewriteMemo* memo) {
  if (!v.is_finite()) return v;
  NoDefinitions plain(impl_->defining);
  // Its own memos unless given: what a term becomes depends on the filter.
  RewriteMemo own;
  RewriteMemo& m = memo ? *memo : own;
  return Expander(*this, max_terms, m.polys, m.atoms, m.too_big, &filter).poly(v.poly);
}

Value Context::product_of(std::span<const std::pair<AtomId, SmallRational>> factors) {
  return impl_->make({Term{impl_->intern_mono(factors, nullptr), SmallRational(1)}});
}

}  // namespace onnx_tv::solver
