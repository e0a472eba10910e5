// Ring operations on canonical polynomials: add and sum merge terms, mul and dot accumulate
// products in a hash map, and every result goes through make(), which rewrites the few
// monomials whose powers simplify (inv(q)^-1 = q, sqrt(p)^2 = p).
#include <algorithm>

#include "solver/context_impl.h"
#include "solver/term_accumulator.h"

namespace onnx_tv::solver {
namespace {

int inf_sign_of_sum(std::span<const Value> xs) {
  bool pos = false, neg = false;
  for (Value v : xs) {
    pos |= v.inf > 0;
    neg |= v.inf < 0;
  }
  if (pos && neg) throw MathError("inf - inf is undefined");
  return pos ? 1 : neg ? -1 : 0;
}

}  // namespace

Value Context::Impl::make(std::vector<Term> terms) {
  bool irregular = false;
  for (const auto& t : terms) irregular |= (monos[t.first].flags & kIrregular) != 0;
  if (!irregular) return Value{intern_poly(std::move(terms)), 0};
  std::vector<Term> regular;
  std::vector<Value> parts;
  for (auto& t : terms) {
    if (monos[t.first].flags & kIrregular) parts.push_back(expand_irregular(t));
    else regular.push_back(std::move(t));
  }
  parts.push_back(Value{intern_poly(std::move(regular)), 0});
  return ctx.sum(parts);
}

Value Context::Impl::expand_irregular(const Term& t) {
  if (std::optional<Value> v = expand_indicators(t)) return *v;
  const std::vector<Factor> factors = monos[t.first].factors;
  std::vector<Factor> kept;
  std::vector<Factor> rewrite;
  for (const auto& f : factors) (irregular_factor(f.first, f.second) ? rewrite : kept).push_back(f);
  if (rewrite.empty()) {
    // q = m1 + b*m2: m2 inv(q) = (1 - m1 inv(q)) / b, or m1 inv(q) = 1 - b m2 inv(q).
    if (binomial_depth >= 24) return Value{intern_poly({t}), 0};
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } guard{++binomial_depth};
    bool second = true;
    AtomId inv = reducible_inv(factors, &second);
    const std::vector<Term> q = polys[atoms[inv].args[0]].terms;
    const Term& out = second ? q[1] : q[0];   // the monomial taken out
    const Term& other = second ? q[0] : q[1];  // the one that takes its place
    MonoId m = mono_mul(mono_mul(t.first, mono_pow(out.first, -1)), mono_of_atom(inv, -1));
    Value other_inv = term_value(mono_mul(other.first, mono_of_atom(inv, 1)),
                                 other.second);
    return ctx.mul(term_value(m, SmallRational(t.second / out.second)), ctx.sub(ctx.one(), other_inv));
  }
  Value v = make({Term{intern_mono(std::move(kept)), t.second}});
  for (const auto& [atom, small_e] : rewrite) {
    const AtomNode& a = atoms[atom];
    const Rational e = small_e.to_rational();
    Value base{a.args[0], 0};
    Rational q = a.fn == Fn::Inv    ? Rational(-e)
                 : a.fn == Fn::Sqrt ? Rational(e / 2)
                                    : Rational(e * a.exponent);
    v = ctx.mul(v, ctx.pow(base, ctx.constant(q)));
  }
  return v;
}

Value Context::Impl::scale(Value v, const SmallRational& c) {
  if (!v.is_finite()) {
    int s = c.sign();
    if (s == 0) throw MathError("0 * inf is undefined");
    return Value{0, int8_t(v.inf * s)};
  }
  if (c.sign() == 0) return ctx.zero();
  if (c == 1) return v;
  std::vector<Term> out = polys[v.poly].terms;
  for (auto& t : out) t.second *= c;
  return Value{intern_poly(std::move(out)), 0};  // monomials unchanged, so still regular
}

Value Context::add(Value a, Value b) {
  Value xs[2] = {a, b};
  if (!a.is_finite() || !b.is_finite()) return Value{0, int8_t(inf_sign_of_sum(xs))};
  const auto& A = impl_->polys[a.poly].terms;
  const auto& B = impl_->polys[b.poly].terms;
  if (A.empty()) return b;
  if (B.empty()) return a;
  std::vector<Term> out;
  out.reserve(A.size() + B.size());
  size_t i = 0, j = 0;
  while (i < A.size() || j < B.size()) {
    if (j == B.size() || (i < A.size() && A[i].first < B[j].first)) {
      out.push_back(A[i++]);
    } else if (i == A.size() || B[j].first < A[i].first) {
      out.push_back(B[j++]);
    } else {
      SmallRational c = A[i].second + B[j].second;
      if (c.sign() != 0) out.emplace_back(A[i].first, std::move(c));
      ++i, ++j;
    }
  }
  return Value{impl_->intern_poly(std::move(out)), 0};
}

Value Context::neg(Value a) {
  if (!a.is_finite()) return Value{0, int8_t(-a.inf)};
  // A broadcast subtraction (x - mean(x) along a row) negates one value once per element:
  // polynomials are interned and never change, so the last negation is kept.
  Impl& I = *impl_;
  if (I.last_negated && I.last_negated->first == a.poly) return Value{I.last_negated->second, 0};
  const Value out = I.scale(a, -1);
  I.last_negated = std::pair{a.poly, out.poly};
  return out;
}

Value Context::sub(Value a, Value b) { return add(a, neg(b)); }

Value Context::sum(std::span<const Value> xs) {
  if (int s = inf_sign_of_sum(xs)) return Value{0, int8_t(s)};
  size_t nonempty = 0, total = 0;
  const Value* last = nullptr;
  for (const Value& v : xs) {
    size_t n = impl_->polys[v.poly].terms.size();
    if (n) ++nonempty, last = &v;
    total += n;
  }
  if (nonempty == 0) return zero();
  if (nonempty == 1) return *last;
  if (xs.size() == 2) return add(xs[0], xs[1]);
  TermAccumulator acc(total);
  for (const Value& v : xs)
    for (const auto& [m, c] : impl_->polys[v.poly].terms) acc.add(m, c);
  return Value{impl_->intern_poly(acc.drain()), 0};
}

namespace {

// c * inf for a constant c of known sign; anything else times inf is undefined.
Value mul_inf(Context& ctx, Value a, Value b) {
  if (a.is_finite()) std::swap(a, b);  // a is infinite now
  if (!b.is_finite()) return Value{0, int8_t(a.inf * b.inf)};
  if (!ctx.is_constant(b)) throw MathError("inf times a symbolic value is undefined");
  auto s = ctx.compare(b, ctx.zero());
  if (!s) throw MathError("inf times a constant of unknown sign");
  if (*s == 0) throw MathError("0 * inf is undefined");
  return Value{0, int8_t(a.inf * *s)};
}

}  // namespace

Value Context::mul(Value a, Value b) {
  if (!a.is_finite() || !b.is_finite()) return mul_inf(*this, a, b);
  Impl& I = *impl_;
  if (I.defining && !is_constant(a) && !is_constant(b)) {
    if (I.defines(I.polys[a.poly].terms.size())) a = I.define(a);
    if (I.defines(I.polys[b.poly].terms.size())) b = I.define(b);
  }
  if (I.polys[a.poly].terms.size() < I.polys[b.poly].terms.size()) std::swap(a, b);
  const auto& A = I.polys[a.poly].terms;
  const auto& B = I.polys[b.poly].terms;
  if (B.empty()) return zero();
  if (B.size() == 1) {
    if (B[0].first == I.one_mono) return I.scale(a, B[0].second);
    // Multiplying by one monomial is injective on monomials: no terms merge.
    MonoId m = B[0].first;
    SmallRational c = B[0].second;
    std::vector<Term> out;
    out.reserve(A.size());
    for (const auto& t : A) out.emplace_back(I.mono_mul(t.first, m), t.second * c);
    std::sort(out.begin(), out.end(),
              [](const Term& x, const Term& y) { return x.first < y.first; });
    return I.make(std::move(out));
  }
  TermAccumulator acc(A.size() * B.size());
  for (const auto& ta : A)
    for (const auto& tb : B) acc.add(I.mono_mul(ta.first, tb.first), ta.second * tb.second);
  return I.make(acc.drain());
}

Value Context::dot(std::span<const Value> a, std::span<const Value> b) {
  if (a.size() != b.size()) throw InternalError("dot of spans of different lengths");
  bool finite = true;
  for (size_t i = 0; i < a.size(); ++i) finite &= a[i].is_finite() && b[i].is_finite();
  if (!finite) {
    std::vector<Value> prods;
    for (size_t i = 0; i < a.size(); ++i) prods.push_back(mul(a[i], b[i]));
    return sum(prods);
  }
  Impl& I = *impl_;
  TermAccumulator acc(64);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto* A = &I.polys[a[i].poly].terms;
    const auto* B = &I.polys[b[i].poly].terms;
    if (I.defines(A->size()) || I.defines(B->size())) {  // mul decides what to define
      Value prod = mul(a[i], b[i]);
      for (const auto& [m, c] : I.polys[prod.poly].terms) acc.add(m, c);
      continue;
    }
    for (const auto& ta : *A)
      for (const auto& tb : *B) acc.add(I.mono_mul(ta.first, tb.first), ta.second * tb.second);
  }
  return I.make(acc.drain());
}

}  // namespace onnx_tv::solver
