// The transcendental and piecewise functions. Each rewrites to a canonical combination of
// atoms: exp splits off constant, max/min and log terms of its argument, log pulls exp factors
// and positive constants out, sigmoid and tanh become rational functions of exp, and max/min
// flatten and sort their arguments.
#include <algorithm>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

Value Context::exp(Value a) {
  if (!a.is_finite()) return a.inf > 0 ? a : zero();
  Impl& I = *impl_;
  auto it = I.exp_cache.find(a.poly);
  if (it != I.exp_cache.end()) return it->second;
  if (auto c = I.exclusive_cases(a)) {
    Value r = I.by_cases(*c, [&](Value x) { return exp(x); });
    I.exp_cache.emplace(a.poly, r);
    return r;
  }
  const std::vector<Term> terms = I.polys[a.poly].terms;
  std::vector<Factor> factors;  // exp(t)^q pieces
  std::vector<Value> powers;    // exp(q log p) = p^q
  std::vector<Term> rest;
  for (const auto& t : terms) {
    if (t.first == I.one_mono) {
      factors.emplace_back(I.exp_one(), SmallRational(t.second));
      continue;
    }
    const auto& f = I.monos[t.first].factors;
    if (f.size() == 1 && f[0].second == 1) {
      AtomId atom = f[0].first;
      Fn fn = I.atoms[atom].fn;
      if (fn == Fn::Max || fn == Fn::Min) {
        AtomNode n;
        n.fn = Fn::Exp;
        n.args = {I.poly_of_atom(atom)};
        factors.emplace_back(I.intern_atom(std::move(n)), SmallRational(t.second));
        continue;
      }
      if (fn == Fn::Log) {
        powers.push_back(Value{I.atoms[atom].args[0], 0});
        powers.push_back(constant(t.second.to_rational()));
        continue;
      }
    }
    rest.push_back(t);
  }
  if (!rest.empty()) {
    // exp(L * r') = exp(r')^L with r' of leading coefficient 1.
    SmallRational lead = rest[0].second;
    const SmallRational inv_lead = lead.reciprocal();
    for (auto& t : rest) t.second *= inv_lead;
    AtomNode n;
    n.fn = Fn::Exp;
    n.args = {I.intern_poly(std::move(rest))};
    factors.emplace_back(I.intern_atom(std::move(n)), lead);
  }
  std::sort(factors.begin(), factors.end(),
            [](const Factor& x, const Factor& y) { return x.first < y.first; });
  Value r = I.term_value(I.intern_mono(std::move(factors)), 1);
  for (size_t i = 0; i < powers.size(); i += 2) r = mul(r, pow(powers[i], powers[i + 1]));
  I.exp_cache.emplace(a.poly, r);
  return r;
}

Value Context::log(Value a) {
  if (!a.is_finite()) {
    if (a.inf > 0) return a;
    throw MathError("log(-inf) is undefined");
  }
  Impl& I = *impl_;
  auto it = I.log_cache.find(a.poly);
  if (it != I.log_cache.end()) return it->second;
  if (auto r = as_rational(a)) {
    if (sgn(*r) <= 0) throw MathError("log of a non-positive number " + r->get_str());
    if (*r == 1) return zero();
    // log(c) = sum of e * log(p) over the prime powers of c, so products and quotients of
    // constants meet one form (log(5/2) = log(5) - log(2)). A large cofactor left after trial
    // division keeps its own log atom.
    std::vector<Value> parts;
    auto add_log = [&](const mpz_class& n, int sign) {
      mpz_class rest = n;
      auto emit = [&](const mpz_class& p, long e) {
        AtomNode atom;
        atom.fn = Fn::Log;
        atom.args = {constant(Rational(p)).poly};
        parts.push_back(I.term_value(I.mono_of_atom(I.intern_atom(std::move(atom)), 1),
                                     sign * e));
      };
      for (unsigned long d = 2; d < 65536 && rest > 1; d += d == 2 ? 1 : 2) {
        if (mpz_class(d) * d > rest) break;
        long e = 0;
        while (mpz_divisible_ui_p(rest.get_mpz_t(), d)) {
          mpz_divexact_ui(rest.get_mpz_t(), rest.get_mpz_t(), d);
          ++e;
        }
        if (e) emit(mpz_class(d), e);
      }
      if (rest > 1) emit(rest, 1);
    };
    add_log(r->get_num(), 1);
    add_log(r->get_den(), -1);
    Value v = sum(parts);
    I.log_cache.emplace(a.poly, v);
    return v;
  }
  Primitive pr = I.primitive(a.poly);
  std::vector<Value> parts;
  std::vector<Factor> kept;
  for (const auto& [atom, e] : std::vector<Factor>(I.monos[pr.m].factors)) {
    if (I.atoms[atom].fn == Fn::Exp) {
      parts.push_back(mul(constant(e.to_rational()), Value{I.atoms[atom].args[0], 0}));
    } else {
      kept.emplace_back(atom, e);
    }
  }
  Value inner = mul(I.term_value(I.intern_mono(std::move(kept)), 1), Value{pr.rest, 0});
  if (sgn(pr.c) > 0) {
    parts.push_back(log(constant(pr.c)));
  } else {
    inner = mul(constant(pr.c), inner);
  }
  if (auto r = as_rational(inner)) {
    if (sgn(*r) <= 0) throw MathError("log of a non-positive number");
  } else {
    if (is_constant(inner)) {
      auto s = compare(inner, zero());
      if (s && *s <= 0) throw MathError("log of a non-positive constant");
    }
    AtomNode n;
    n.fn = Fn::Log;
    n.args = {inner.poly};
    parts.push_back(I.value_of_atom(I.intern_atom(std::move(n)), 1));
  }
  Value r = sum(parts);
  I.log_cache.emplace(a.poly, r);
  return r;
}

Value Context::sigmoid(Value a) { return recip(add(one(), exp(neg(a)))); }

Value Context::tanh(Value a) {
  Value two = constant(2LL);
  return sub(one(), mul(two, recip(add(one(), exp(mul(two, a))))));
}

// f(-p) = -f(p) (odd) or f(p) (even): the argument is kept with a positive leading coefficient.
Value Context::Impl::odd_function(Fn fn, Value a, bool odd) {
  if (auto c = exclusive_cases(a)) return by_cases(*c, [&](Value x) { return odd_function(fn, x, odd); });
  const auto& terms = polys[a.poly].terms;
  if (terms.empty()) return fn == Fn::Cos ? ctx.one() : ctx.zero();
  bool flip = sgn(terms[0].second) < 0;
  Value arg = flip ? ctx.neg(a) : a;
  AtomNode n;
  n.fn = fn;
  n.args = {arg.poly};
  Value r = value_of_atom(intern_atom(std::move(n)), 1);
  return flip && odd ? ctx.neg(r) : r;
}

Value Context::erf(Value a) {
  if (!a.is_finite()) return constant(Rational(a.inf));
  return impl_->odd_function(Fn::Erf, a, true);
}

Value Context::sin(Value a) {
  if (!a.is_finite()) throw MathError("sin of an infinity is undefined");
  return impl_->odd_function(Fn::Sin, a, true);
}

Value Context::cos(Value a) {
  if (!a.is_finite()) throw MathError("cos of an infinity is undefined");
  return impl_->odd_function(Fn::Cos, a, false);
}

Value Context::abs(Value a) {
  if (!a.is_finite()) return pos_inf();
  Impl& I = *impl_;
  const auto& terms = I.polys[a.poly].terms;
  if (terms.empty()) return a;
  if (is_constant(a)) {
    if (auto s = compare(a, zero())) return *s < 0 ? neg(a) : a;
  }
  if (auto cases = I.exclusive_cases(a)) return I.by_cases(*cases, [&](Value x) { return abs(x); });
  const SmallRational c = terms[0].second;
  if (terms.size() == 1) {
    bool all_exp = true;  // exp atoms are positive
    for (const auto& f : I.monos[terms[0].first].factors) all_exp &= I.atoms[f.first].fn == Fn::Exp;
    if (all_exp) return sgn(c) < 0 ? neg(a) : a;
  }
  // |c p'| = |c| |p'| with p' of leading coefficient 1.
  Value unit = I.scale(a, c.reciprocal());
  AtomNode n;
  n.fn = Fn::Abs;
  n.args = {unit.poly};
  return I.scale(I.value_of_atom(I.intern_atom(std::move(n)), 1), c.sign() < 0 ? -c : c);
}

Value Context::relu(Value a) {
  Value xs[2] = {a, zero()};
  return max(xs);
}

Value Context::Impl::extreme(std::span<const Value> xs, bool is_max) {
  if (xs.empty()) throw InternalError(is_max ? "max of nothing" : "min of nothing");
  const Fn fn = is_max ? Fn::Max : Fn::Min;
  const int8_t absorbing = is_max ? 1 : -1;  // +inf wins a max, -inf a min
  std::vector<PolyId> args;
  std::optional<Rational> best;  // the extreme of the rational arguments
  auto take = [&](PolyId p) {
    if (is_rational(p)) {
      Rational r = polys[p].terms.empty() ? Rational(0) : polys[p].terms[0].second.to_rational();
      if (!best || (is_max ? r > *best : r < *best)) best = r;
    } else {
      args.push_back(p);
    }
  };
  for (Value v : xs) {
    if (!v.is_finite()) {
      if (v.inf == absorbing) return v;
      continue;  // the neutral infinity drops out
    }
    AtomId a;
    SmallRational c;
    if (single_atom(v.poly, &a, &c) && c == 1 && atoms[a].fn == fn) {
      for (PolyId p : std::vector<PolyId>(atoms[a].args)) take(p);
    } else {
      take(v.poly);
    }
  }
  if (best) args.push_back(ctx.constant(*best).poly);
  if (args.empty()) return Value{0, int8_t(-absorbing)};
  // One argument a routing decides among cases, the others not: the extreme case by case.
  const auto routed = [&](PolyId p) { return (polys[p].flags & kSelectionFactor) != 0; };
  if (std::count_if(args.begin(), args.end(), routed) == 1) {
    const auto at = std::find_if(args.begin(), args.end(), routed);
    if (auto cases = exclusive_cases(Value{*at, 0})) {
      std::vector<Value> xs{Value{}};  // xs[0]: the case's value
      for (auto it = args.begin(); it != args.end(); ++it)
        if (it != at) xs.push_back(Value{*it, 0});
      return by_cases(*cases, [&](Value x) {
        xs[0] = x;
        return extreme(xs, is_max);
      });
    }
  }
  // Constants with atoms (log(10/9), exp(1/3)) fold too when their order is clear.
  std::optional<PolyId> top;
  bool decided = true;
  size_t constants = 0;
  for (PolyId p : args) {
    if (polys[p].flags & kHasSymbol) continue;
    ++constants;
    if (!top) {
      top = p;
      continue;
    }
    auto s = ctx.compare(Value{p, 0}, Value{*top, 0});
    if (!s) decided = false;
    else if (is_max ? *s > 0 : *s < 0) top = p;
  }
  if (constants > 1 && decided) {
    std::erase_if(args, [&](PolyId p) { return !(polys[p].flags & kHasSymbol) && p != *top; });
  }
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  if (args.size() == 1) return Value{args[0], 0};
  AtomNode n;
  n.fn = fn;
  n.args = std::move(args);
  return value_of_atom(intern_atom(std::move(n)), 1);
}

Value Context::max(std::span<const Value> xs) { return impl_->extreme(xs, true); }
Value Context::min(std::span<const Value> xs) { return impl_->extreme(xs, false); }

}  // namespace onnx_tv::solver
