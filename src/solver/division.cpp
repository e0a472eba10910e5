// Reciprocals, quotients, powers and square roots. 1/p is canonical through the primitive
// decomposition p = c * m * rest: 1/p = (1/c) * m^-1 * inv(rest), so constant factors and
// monomial factors move freely through divisions and equal denominators give equal atoms.
#include <unordered_map>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

const Primitive& Context::Impl::primitive(PolyId p) {
  auto it = primitive_cache.find(p);
  if (it != primitive_cache.end()) return it->second;
  const std::vector<Term> terms = polys[p].terms;
  Primitive pr;
  pr.c = terms.empty() ? Rational(1) : terms[0].second.to_rational();
  // Per-atom minimum exponent, an absent atom counting as exponent 0.
  struct Range {
    SmallRational lo, hi;
    size_t count = 0;
  };
  std::unordered_map<AtomId, Range> range;
  for (const auto& t : terms)
    for (const auto& [a, e] : monos[t.first].factors) {
      auto [r, fresh] = range.try_emplace(a, Range{e, e, 0});
      if (!fresh) {
        if (e < r->second.lo) r->second.lo = e;
        if (e > r->second.hi) r->second.hi = e;
      }
      ++r->second.count;
    }
  std::vector<Factor> content;
  for (auto& [a, r] : range) {
    if (r.count < terms.size()) {
      if (r.lo.sign() > 0) r.lo = 0;
      if (r.hi.sign() < 0) r.hi = 0;
    }
    if (r.lo.sign() == 0) continue;
    // Taking sqrt(p)^-1 out of sqrt(p) + ... would leave sqrt(p)^2 behind: keep such mixes.
    const AtomNode& at = atoms[a];
    if (at.fn == Fn::Sqrt && r.hi - r.lo >= 2) continue;
    if (at.fn == Fn::Pow && (r.hi - r.lo).to_rational() * at.exponent >= 1) continue;
    content.emplace_back(a, r.lo);
  }
  std::sort(content.begin(), content.end(),
            [](const Factor& x, const Factor& y) { return x.first < y.first; });
  pr.m = intern_mono(std::move(content));
  MonoId m_inv = mono_pow(pr.m, -1);
  std::vector<Term> rest;
  rest.reserve(terms.size());
  for (const auto& t : terms) rest.emplace_back(mono_mul(t.first, m_inv), t.second);
  std::sort(rest.begin(), rest.end(), [](const Term& x, const Term& y) { return x.first < y.first; });
  // Dividing out m can reorder the terms: the coefficient that must become 1 is the one
  // that leads after sorting.
  if (!rest.empty()) pr.c = rest[0].second.to_rational();
  const SmallRational inv_c = rest.empty() ? SmallRational(1) : rest[0].second.reciprocal();
  for (auto& t : rest) t.second *= inv_c;
  pr.rest = intern_poly(std::move(rest));
  return primitive_cache.emplace(p, std::move(pr)).first->second;
}

AtomId Context::Impl::first_inv(PolyId p) const {
  AtomId best = InternTable::kNone;
  for (const auto& t : polys[p].terms)
    for (const auto& f : monos[t.first].factors)
      if (atoms[f.first].fn == Fn::Inv && f.first < best) best = f.first;
  return best;
}

Value Context::Impl::times_cancelling(PolyId p, AtomId inv) {
  const std::vector<Term> terms = polys[p].terms;
  Value q{atoms[inv].args[0], 0};
  MonoId down = mono_of_atom(inv, -1);
  std::vector<Value> parts;
  std::vector<Term> plain;
  for (const auto& t : terms) {
    bool has = false;
    for (const auto& f : monos[t.first].factors) has |= f.first == inv;
    if (has) parts.push_back(term_value(mono_mul(t.first, down), t.second));
    else plain.push_back(t);
  }
  parts.push_back(ctx.mul(Value{intern_poly(std::move(plain)), 0}, q));
  return ctx.sum(parts);
}

Value Context::recip(Value a) {
  if (!a.is_finite()) return zero();
  Impl& I = *impl_;
  auto it = I.recip_cache.find(a.poly);
  if (it != I.recip_cache.end()) return it->second;
  const auto& terms = I.polys[a.poly].terms;
  if (terms.empty()) throw MathError("division by zero");
  Value r;
  // By cases (exclusive_cases.cpp) only where the value without the routed terms is a nonzero
  // rational, as in sigmoid's 1 + exp(-x) of a routed x: the case no routing holds is then
  // defined. A case's reciprocal is undefined only where its own denominator vanishes, as for
  // any inverse atom (x * inv(x) is 1 in every canonical form).
  if (auto c = I.exclusive_cases(a); c && I.is_rational(c->rest.poly) &&
                                       !I.polys[c->rest.poly].terms.empty()) {
    r = I.by_cases(*c, [&](Value x) { return recip(x); });
    I.recip_cache.emplace(a.poly, r);
    return r;
  }
  if (terms.size() == 1) {
    MonoId m = terms[0].first;
    r = I.term_value(I.mono_pow(m, -1), terms[0].second.reciprocal());
  } else {
    Primitive pr = I.primitive(a.poly);
    if (AtomId inner = I.first_inv(pr.rest); inner != InternTable::kNone) {
      // 1/(... + u*inv(q)) = q / (q*(...) + u): denominators hold no inverses, so nested
      // fractions meet one form.
      Value q{I.atoms[inner].args[0], 0};
      Value cleared = I.times_cancelling(pr.rest, inner);
      Value outside = I.term_value(I.mono_pow(pr.m, -1), SmallRational(Rational(1 / pr.c)));
      r = mul(mul(outside, q), recip(cleared));
      I.recip_cache.emplace(a.poly, r);
      return r;
    }
    AtomNode n;
    n.fn = Fn::Inv;
    n.args = {pr.rest};
    AtomId inv = I.intern_atom(std::move(n));
    MonoId m = I.mono_mul(I.mono_pow(pr.m, -1), I.mono_of_atom(inv, 1));
    r = I.term_value(m, SmallRational(Rational(1 / pr.c)));
  }
  I.recip_cache.emplace(a.poly, r);
  return r;
}

Value Context::div(Value a, Value b) {
  if (b.is_finite() && impl_->polys[b.poly].terms.empty()) throw MathError("division by zero");
  return mul(a, recip(b));
}

Value Context::Impl::pow_int(Value base, const mpz_class& n) {
  if (sgn(n) == 0) return ctx.one();
  if (sgn(n) < 0) return pow_int(ctx.recip(base), mpz_class(-n));
  Value result = ctx.one();
  Value sq = base;
  mpz_class k = n;
  while (true) {
    if (mpz_odd_p(k.get_mpz_t())) result = ctx.mul(result, sq);
    k >>= 1;
    if (sgn(k) == 0) break;
    sq = ctx.mul(sq, sq);
  }
  return result;
}

namespace {

// The exact d-th root of a nonnegative integer, if there is one.
std::optional<mpz_class> exact_root(const mpz_class& z, unsigned long d) {
  mpz_class r;
  if (mpz_root(r.get_mpz_t(), z.get_mpz_t(), d) == 0) return std::nullopt;
  return r;
}

// q = whole + frac with frac of the sign of q and |frac| < 1, so p^q = p^whole * p^frac.
mpz_class whole_part(const Rational& q) {
  mpz_class w;
  mpz_tdiv_q(w.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  return w;
}

}  // namespace

Value Context::Impl::rational_pow(const Rational& base, const Rational& q) {
  if (sgn(base) < 0) throw MathError("a negative number to a fractional power is undefined");
  if (sgn(base) == 0) {
    if (sgn(q) < 0) throw MathError("division by zero (0 to a negative power)");
    return ctx.zero();
  }
  const mpz_class& d = q.get_den();
  if (d.fits_ulong_p()) {
    auto rn = exact_root(base.get_num(), d.get_ui());
    auto rd = exact_root(base.get_den(), d.get_ui());
    if (rn && rd) return pow_int(ctx.constant(Rational(*rn, *rd)), q.get_num());
  }
  mpz_class w = whole_part(q);
  Rational frac = q - Rational(w);
  AtomNode n;
  n.fn = frac == Rational(1, 2) || frac == Rational(-1, 2) ? Fn::Sqrt : Fn::Pow;
  n.args = {ctx.constant(base).poly};
  if (n.fn == Fn::Pow) n.exponent = ::abs(frac);
  AtomId atom = intern_atom(std::move(n));
  return ctx.mul(pow_int(ctx.constant(base), w), value_of_atom(atom, sgn(frac)));
}

Value Context::pow(Value base, Value exponent) {
  auto q = as_rational(exponent);
  if (!q) throw Unsupported("pow with a non-constant exponent");
  Impl& I = *impl_;
  const bool integer = q->get_den() == 1;
  if (!base.is_finite()) {
    if (sgn(*q) == 0) return one();
    if (sgn(*q) < 0) return zero();
    if (base.inf > 0) return pos_inf();
    if (!integer) throw MathError("-inf to a fractional power is undefined");
    return Value{0, int8_t(mpz_odd_p(q->get_num_mpz_t()) ? -1 : 1)};
  }
  if (integer) return I.pow_int(base, q->get_num());
  if (auto b = as_rational(base)) return I.rational_pow(*b, *q);
  // p^(n + 1/2) = p^n * sqrt(p); the fraction takes the sign of q.
  mpz_class w = whole_part(*q);
  Rational frac = *q - Rational(w);
  Value whole = I.pow_int(base, w);
  if (frac == Rational(1, 2)) return mul(whole, sqrt(base));
  if (frac == Rational(-1, 2)) return mul(whole, recip(sqrt(base)));
  // A monomial of exp atoms with a positive coefficient takes the power factor by factor.
  const auto& terms = I.polys[base.poly].terms;
  if (terms.size() == 1 && sgn(terms[0].second) > 0) {
    bool all_exp = true;
    for (const auto& f : I.monos[terms[0].first].factors) all_exp &= I.atoms[f.first].fn == Fn::Exp;
    if (all_exp) {
      MonoId m = I.mono_pow(terms[0].first, SmallRational(*q));
      Rational c = terms[0].second.to_rational();
      return mul(I.rational_pow(c, *q), I.term_value(m, 1));
    }
  }
  if (is_constant(base)) {
    auto s = compare(base, zero());
    if (s && *s < 0) throw MathError("a negative number to a fractional power is undefined");
    if (s && *s == 0) return sgn(*q) > 0 ? zero() : throw MathError("division by zero");
  }
  AtomNode n;
  n.fn = Fn::Pow;
  n.args = {base.poly};
  n.exponent = ::abs(frac);
  AtomId atom = I.intern_atom(std::move(n));
  return mul(whole, I.value_of_atom(atom, sgn(frac)));
}

Value Context::sqrt(Value a) {
  if (!a.is_finite()) {
    if (a.inf > 0) return a;
    throw MathError("sqrt(-inf) is undefined");
  }
  Impl& I = *impl_;
  if (auto r = as_rational(a)) {
    if (sgn(*r) < 0) throw MathError("sqrt of a negative number " + r->get_str());
    return I.rational_pow(*r, Rational(1, 2));
  }
  const auto& terms = I.polys[a.poly].terms;
  if (terms.size() == 1 && sgn(terms[0].second) > 0) {
    bool all_exp = true;
    for (const auto& f : I.monos[terms[0].first].factors) all_exp &= I.atoms[f.first].fn == Fn::Exp;
    if (all_exp) {
      MonoId m = I.mono_pow(terms[0].first, SmallRational(Rational(1, 2)));
      Rational c = terms[0].second.to_rational();
      return mul(I.rational_pow(c, Rational(1, 2)), I.term_value(m, 1));
    }
  }
  if (is_constant(a)) {
    auto s = compare(a, zero());
    if (s && *s < 0) throw MathError("sqrt of a negative constant");
  }
  AtomNode n;
  n.fn = Fn::Sqrt;
  n.args = {a.poly};
  return I.value_of_atom(I.intern_atom(std::move(n)), 1);
}

}  // namespace onnx_tv::solver
