// Definitions: def(p) atoms that keep large products unexpanded, and their expansion for a
// final comparison (see the note on definitions in context.h).
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

struct TooBig {};

class Expander {
 public:
  Expander(Context& ctx, size_t max_terms, std::unordered_map<PolyId, Value>& polys,
           std::unordered_map<AtomId, Value>& atoms, std::unordered_set<PolyId>& too_big)
      : ctx_(ctx), max_(max_terms), polys_(polys), atoms_(atoms), too_big_(too_big) {}

  Value poly(PolyId p) {
    if (auto it = polys_.find(p); it != polys_.end()) return it->second;
    if (too_big_.count(p)) throw TooBig{};
    struct Mark {  // a polynomial whose expansion gave up gives up at once next time
      std::unordered_set<PolyId>& set;
      PolyId p;
      bool done = false;
      ~Mark() {
        if (!done) set.insert(p);
      }
    } mark{too_big_, p};
    std::vector<Value> terms;
    const size_t n = ctx_.poly_term_count(p);
    for (size_t i = 0; i < n; ++i) {
      // Copy the view: building values below may move the store it points into.
      TermView tv = ctx_.term(p, i);
      const Rational coef = tv.coefficient->to_rational();
      const std::vector<std::pair<AtomId, SmallRational>> factors(tv.factors.begin(), tv.factors.end());
      Value t = ctx_.constant(coef);
      for (const auto& [a, e] : factors) {
        Value f = power(a, e);
        if (double(ctx_.term_count(t)) * double(ctx_.term_count(f)) > 16.0 * double(max_))
          throw TooBig{};
        t = check(ctx_.mul(t, f));
      }
      terms.push_back(t);
    }
    Value out = check(ctx_.sum(terms));
    polys_[p] = out;
    mark.done = true;
    return out;
  }

 private:
  Value check(Value v) {
    if (ctx_.term_count(v) > max_) throw TooBig{};
    return v;
  }

  Value power(AtomId a, const SmallRational& small_e) {
    const Rational e = small_e.to_rational();
    AtomView av = ctx_.atom(a);
    const Fn fn = av.fn;
    if (fn == Fn::Symbol) return ctx_.pow(atom_value(a), ctx_.constant(e));
    if (fn == Fn::Exp) {  // exp(t)^q = exp(q t), rational q included
      const PolyId arg = av.args[0];
      return ctx_.exp(check(ctx_.mul(ctx_.constant(e), poly(arg))));
    }
    Value base = apply(a);
    if (e == 1) return base;
    if (e > 1 && e.get_den() == 1) guard_power(ctx_.term_count(base), e.get_num().get_si());
    return check(ctx_.pow(base, ctx_.constant(e)));
  }

  // A power of a sum has up to C(n + e - 1, e) terms: give up before building one that is
  // certain to be far beyond the budget (cancellation cannot bring it back below in practice,
  // and giving up only means UNKNOWN).
  void guard_power(size_t n, long e) {
    double bound = 1;
    for (long k = 1; k <= e; ++k) {
      bound = bound * double(n + size_t(k) - 1) / double(k);
      if (bound > 16.0 * double(max_)) throw TooBig{};
    }
  }

  Value atom_value(AtomId a) {
    AtomView av = ctx_.atom(a);
    if (av.fn == Fn::Symbol) return ctx_.symbol(*av.name);
    return apply(a);
  }

  // The atom's function applied to its expanded arguments.
  Value apply(AtomId a) {
    if (auto it = atoms_.find(a); it != atoms_.end()) return it->second;
    AtomView av = ctx_.atom(a);
    const Fn fn = av.fn;
    const std::vector<PolyId> args(av.args.begin(), av.args.end());
    const Rational exponent = av.exponent ? *av.exponent : Rational(0);
    std::vector<Value> xs;
    for (PolyId p : args) {
      xs.push_back(poly(p));
      // Applying a function (an inverse above all, which looks for cancellation) to a large
      // expanded argument costs far more than its size: past this, give up (UNKNOWN).
      if (fn != Fn::Def && ctx_.term_count(xs.back()) > max_ / 64) throw TooBig{};
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
      case Fn::Symbol: out = ctx_.symbol(*av.name); break;
    }
    atoms_[a] = check(out);
    return out;
  }

  Context& ctx_;
  size_t max_;
  // Shared across calls (held by the Context): expansions are exact, so they stay valid.
  std::unordered_map<PolyId, Value>& polys_;
  std::unordered_map<AtomId, Value>& atoms_;
  std::unordered_set<PolyId>& too_big_;
};

}  // namespace

std::optional<Value> Context::expand_definitions(Value v, size_t max_terms) {
  if (!v.is_finite()) return v;
  struct Restore {
    bool& flag;
    bool saved;
    ~Restore() { flag = saved; }
  } restore{impl_->defining, impl_->defining};
  impl_->defining = false;
  try {
    Impl& I = *impl_;
    if (I.expand_budget != max_terms) {  // "too big" depends on the budget
      I.expand_too_big.clear();
      I.expand_budget = max_terms;
    }
    return Expander(*this, max_terms, I.expanded_polys, I.expanded_atoms, I.expand_too_big)
        .poly(v.poly);
  } catch (const TooBig&) {
    return std::nullopt;
  }
}

}  // namespace onnx_tv::solver
