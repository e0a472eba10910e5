// Outward-rounded interval arithmetic over MPFR: lower endpoints are rounded down, upper ones
// up, and every function is monotone on the pieces it is evaluated on (or bounded by its
// extrema where it is not: sin, cos, even powers, abs).
#include "solver/interval.h"

#include <utility>

namespace onnx_tv::solver {
namespace {

constexpr mpfr_rnd_t kDown = MPFR_RNDD, kUp = MPFR_RNDU;

MaybeInterval checked(Interval r) {
  if (mpfr_nan_p(r.lo()) || mpfr_nan_p(r.hi())) return std::nullopt;
  return r;
}

bool is_zero_point(const Interval& a) { return mpfr_zero_p(a.lo()) && mpfr_zero_p(a.hi()); }

// The interval [f(lo) rounded down, f(hi) rounded up] of a nondecreasing f.
template <class F>
MaybeInterval monotone(const Interval& a, F f) {
  Interval r(a.precision());
  f(r.lo(), a.lo(), kDown);
  f(r.hi(), a.hi(), kUp);
  return checked(std::move(r));
}

// pi as an interval.
Interval pi(mpfr_prec_t precision) {
  Interval r(precision);
  mpfr_const_pi(r.lo(), kDown);
  mpfr_const_pi(r.hi(), kUp);
  return r;
}

// The point x as an interval of one element.
Interval point(mpfr_srcptr x, mpfr_prec_t precision) {
  Interval r(precision);
  mpfr_set(r.lo(), x, kDown);
  mpfr_set(r.hi(), x, kUp);
  return r;
}

// Whether a may hold a point phase*pi + 2k*pi for an integer k (true when unsure): where sin
// and cos reach their extrema.
bool may_reach(const Interval& a, const Rational& phase) {
  if (!mpfr_number_p(a.lo()) || !mpfr_number_p(a.hi())) return true;
  const mpfr_prec_t p = a.precision() + 16;
  const Interval shift = *mul(Interval(phase, p), pi(p));
  const MaybeInterval inv_period = recip(*mul(Interval(Rational(2), p), pi(p)));
  MaybeInterval from = sub(point(a.lo(), p), shift);
  MaybeInterval to = sub(point(a.hi(), p), shift);
  if (!inv_period || !from || !to) return true;
  from = mul(*from, *inv_period);
  to = mul(*to, *inv_period);
  if (!from || !to) return true;
  // An integer k with from <= k <= to exists when ceil(from.lo) <= floor(to.hi).
  mpfr_t k_lo, k_hi;
  mpfr_init2(k_lo, p);
  mpfr_init2(k_hi, p);
  mpfr_ceil(k_lo, from->lo());
  mpfr_floor(k_hi, to->hi());
  const bool reach = mpfr_lessequal_p(k_lo, k_hi) != 0;
  mpfr_clear(k_lo);
  mpfr_clear(k_hi);
  return reach;
}

// sin(a + phase*pi) over a, from its values at the ends and the extrema inside.
MaybeInterval shifted_sin(const Interval& a, bool cosine) {
  Interval r(a.precision());
  if (!mpfr_number_p(a.lo()) || !mpfr_number_p(a.hi())) {
    mpfr_set_si(r.lo(), -1, kDown);
    mpfr_set_si(r.hi(), 1, kUp);
    return r;
  }
  auto f = cosine ? mpfr_cos : mpfr_sin;
  Interval at_lo(a.precision()), at_hi(a.precision());
  f(at_lo.lo(), a.lo(), kDown);
  f(at_lo.hi(), a.lo(), kUp);
  f(at_hi.lo(), a.hi(), kDown);
  f(at_hi.hi(), a.hi(), kUp);
  mpfr_min(r.lo(), at_lo.lo(), at_hi.lo(), kDown);
  mpfr_max(r.hi(), at_lo.hi(), at_hi.hi(), kUp);
  // sin peaks at pi/2 + 2k pi and bottoms at -pi/2; cos at 0 and pi.
  if (may_reach(a, cosine ? Rational(0) : Rational(1, 2))) mpfr_set_si(r.hi(), 1, kUp);
  if (may_reach(a, cosine ? Rational(1) : Rational(-1, 2))) mpfr_set_si(r.lo(), -1, kDown);
  return checked(std::move(r));
}

}  // namespace

Interval::Interval(mpfr_prec_t precision) {
  mpfr_init2(lo_, precision);
  mpfr_init2(hi_, precision);
  mpfr_set_zero(lo_, 1);
  mpfr_set_zero(hi_, 1);
}

Interval::Interval(const Rational& q, mpfr_prec_t precision) {
  mpfr_init2(lo_, precision);
  mpfr_init2(hi_, precision);
  mpfr_set_q(lo_, q.get_mpq_t(), kDown);
  mpfr_set_q(hi_, q.get_mpq_t(), kUp);
}

Interval::Interval(const Interval& o) {
  mpfr_init2(lo_, o.precision());
  mpfr_init2(hi_, o.precision());
  mpfr_set(lo_, o.lo_, kDown);
  mpfr_set(hi_, o.hi_, kUp);
}

Interval::Interval(Interval&& o) noexcept {
  mpfr_init2(lo_, MPFR_PREC_MIN);
  mpfr_init2(hi_, MPFR_PREC_MIN);
  mpfr_swap(lo_, o.lo_);
  mpfr_swap(hi_, o.hi_);
}

Interval& Interval::operator=(const Interval& o) {
  if (this != &o) {
    mpfr_set_prec(lo_, o.precision());
    mpfr_set_prec(hi_, o.precision());
    mpfr_set(lo_, o.lo_, kDown);
    mpfr_set(hi_, o.hi_, kUp);
  }
  return *this;
}

Interval& Interval::operator=(Interval&& o) noexcept {
  mpfr_swap(lo_, o.lo_);
  mpfr_swap(hi_, o.hi_);
  return *this;
}

Interval::~Interval() {
  mpfr_clear(lo_);
  mpfr_clear(hi_);
}

std::optional<int> Interval::sign() const {
  if (mpfr_sgn(lo_) > 0) return 1;
  if (mpfr_sgn(hi_) < 0) return -1;
  if (mpfr_zero_p(lo_) && mpfr_zero_p(hi_)) return 0;
  return std::nullopt;
}

bool Interval::holds_zero() const { return mpfr_sgn(lo_) <= 0 && mpfr_sgn(hi_) >= 0; }

bool disjoint(const Interval& a, const Interval& b) {
  return mpfr_less_p(a.hi_, b.lo_) || mpfr_less_p(b.hi_, a.lo_);
}

bool add_to(Interval& r, const Interval& a, const Interval& b) {
  mpfr_add(r.lo(), a.lo(), b.lo(), kDown);
  mpfr_add(r.hi(), a.hi(), b.hi(), kUp);
  return !mpfr_nan_p(r.lo()) && !mpfr_nan_p(r.hi());
}

bool mul_to(Interval& r, const Interval& a, const Interval& b) {
  if (is_zero_point(a) || is_zero_point(b)) {  // 0 * [x, inf] is 0: the values are finite
    mpfr_set_zero(r.lo(), 1);
    mpfr_set_zero(r.hi(), 1);
    return true;
  }
  // Which endpoint products bound the result, by the signs of the operands; products go to
  // scratch first, since r may be a or b.
  thread_local Interval t(64), u(64);
  const mpfr_prec_t p = r.precision();
  if (t.precision() != p) t = Interval(p), u = Interval(p);
  const int sa = mpfr_sgn(a.lo()) >= 0 ? 1 : mpfr_sgn(a.hi()) <= 0 ? -1 : 0;
  const int sb = mpfr_sgn(b.lo()) >= 0 ? 1 : mpfr_sgn(b.hi()) <= 0 ? -1 : 0;
  auto lo = [&](mpfr_srcptr x, mpfr_srcptr y) { mpfr_mul(t.lo(), x, y, kDown); };
  auto hi = [&](mpfr_srcptr x, mpfr_srcptr y) { mpfr_mul(t.hi(), x, y, kUp); };
  const auto a1 = a.lo(), a2 = a.hi(), b1 = b.lo(), b2 = b.hi();
  if (sa > 0) {
    if (sb > 0) lo(a1, b1), hi(a2, b2);
    else if (sb < 0) lo(a2, b1), hi(a1, b2);
    else lo(a2, b1), hi(a2, b2);
  } else if (sa < 0) {
    if (sb > 0) lo(a1, b2), hi(a2, b1);
    else if (sb < 0) lo(a2, b2), hi(a1, b1);
    else lo(a1, b2), hi(a1, b1);
  } else if (sb > 0) {
    lo(a1, b2), hi(a2, b2);
  } else if (sb < 0) {
    lo(a2, b1), hi(a1, b1);
  } else {  // both hold 0 inside: two candidates for each end
    lo(a1, b2), hi(a1, b1);
    mpfr_mul(u.lo(), a2, b1, kDown);
    mpfr_mul(u.hi(), a2, b2, kUp);
    mpfr_min(t.lo(), t.lo(), u.lo(), kDown);
    mpfr_max(t.hi(), t.hi(), u.hi(), kUp);
  }
  mpfr_swap(r.lo(), t.lo());
  mpfr_swap(r.hi(), t.hi());
  return !mpfr_nan_p(r.lo()) && !mpfr_nan_p(r.hi());
}

std::string Interval::midpoint_text(int digits) const {
  mpfr_t m;
  mpfr_init2(m, precision() + 1);
  mpfr_add(m, lo_, hi_, MPFR_RNDN);
  mpfr_div_2ui(m, m, 1, MPFR_RNDN);
  char* text = nullptr;
  mpfr_asprintf(&text, "%.*Rg", digits, m);
  std::string out = text ? text : "";
  mpfr_free_str(text);
  mpfr_clear(m);
  return out;
}

long double Interval::width() const {
  mpfr_t w;
  mpfr_init2(w, precision());
  mpfr_sub(w, hi_, lo_, MPFR_RNDU);
  long double x = mpfr_get_ld(w, MPFR_RNDU);
  mpfr_clear(w);
  return x;
}

MaybeInterval add(const Interval& a, const Interval& b) {
  Interval r(std::max(a.precision(), b.precision()));
  if (!add_to(r, a, b)) return std::nullopt;
  return r;
}

MaybeInterval sub(const Interval& a, const Interval& b) {
  Interval r(std::max(a.precision(), b.precision()));
  mpfr_sub(r.lo(), a.lo(), b.hi(), kDown);
  mpfr_sub(r.hi(), a.hi(), b.lo(), kUp);
  return checked(std::move(r));
}

MaybeInterval mul(const Interval& a, const Interval& b) {
  Interval r(std::max(a.precision(), b.precision()));
  if (!mul_to(r, a, b)) return std::nullopt;
  return r;
}

MaybeInterval recip(const Interval& a) {
  if (a.holds_zero()) return std::nullopt;
  Interval r(a.precision());
  mpfr_ui_div(r.lo(), 1, a.hi(), kDown);
  mpfr_ui_div(r.hi(), 1, a.lo(), kUp);
  return checked(std::move(r));
}

MaybeInterval pow_int(const Interval& a, long n) {
  if (n < 0) {
    MaybeInterval inv = recip(a);
    return inv ? pow_int(*inv, -n) : std::nullopt;
  }
  if (n == 0) return Interval(Rational(1), a.precision());
  if (n == 1) return a;
  const unsigned long k = static_cast<unsigned long>(n);
  Interval r(a.precision());
  if (n % 2 == 1 || mpfr_sgn(a.lo()) >= 0) {  // nondecreasing
    mpfr_pow_ui(r.lo(), a.lo(), k, kDown);
    mpfr_pow_ui(r.hi(), a.hi(), k, kUp);
  } else if (mpfr_sgn(a.hi()) <= 0) {  // an even power of a nonpositive interval: decreasing
    mpfr_pow_ui(r.lo(), a.hi(), k, kDown);
    mpfr_pow_ui(r.hi(), a.lo(), k, kUp);
  } else {  // an even power of an interval around 0: from 0 to the larger end's power
    mpfr_t m;
    mpfr_init2(m, a.precision());
    mpfr_neg(m, a.lo(), kUp);  // exact
    mpfr_max(m, m, a.hi(), kUp);
    mpfr_pow_ui(r.hi(), m, k, kUp);
    mpfr_clear(m);
  }
  return checked(std::move(r));
}

MaybeInterval pow_rational(const Interval& a, const Rational& q) {
  if (q.get_den() == 1 && q.get_num().fits_slong_p()) return pow_int(a, q.get_num().get_si());
  if (mpfr_sgn(a.lo()) < 0) return std::nullopt;
  if (sgn(q) > 0 && mpfr_zero_p(a.lo())) {  // x^q from 0 up: bounded by the upper end's power
    if (mpfr_zero_p(a.hi())) return Interval(a.precision());
    MaybeInterval top = pow_rational(point(a.hi(), a.precision()), q);
    if (!top) return std::nullopt;
    mpfr_set_zero(top->lo(), 1);
    return top;
  }
  MaybeInterval l = log(a);
  if (!l) return std::nullopt;
  MaybeInterval e = mul(*l, Interval(q, a.precision()));
  return e ? exp(*e) : std::nullopt;
}

MaybeInterval exp(const Interval& a) { return monotone(a, mpfr_exp); }

MaybeInterval log(const Interval& a) {
  if (mpfr_sgn(a.lo()) <= 0) return std::nullopt;
  return monotone(a, mpfr_log);
}

MaybeInterval sqrt(const Interval& a) {
  if (mpfr_sgn(a.lo()) < 0) return std::nullopt;
  return monotone(a, mpfr_sqrt);
}

MaybeInterval erf(const Interval& a) { return monotone(a, mpfr_erf); }
MaybeInterval sin(const Interval& a) { return shifted_sin(a, false); }
MaybeInterval cos(const Interval& a) { return shifted_sin(a, true); }

MaybeInterval abs(const Interval& a) {
  if (mpfr_sgn(a.lo()) >= 0) return a;
  Interval r(a.precision());
  if (mpfr_sgn(a.hi()) <= 0) {
    mpfr_neg(r.lo(), a.hi(), kDown);
    mpfr_neg(r.hi(), a.lo(), kUp);
  } else {
    mpfr_neg(r.hi(), a.lo(), kUp);
    mpfr_max(r.hi(), r.hi(), a.hi(), kUp);
  }
  return checked(std::move(r));
}

MaybeInterval max(const Interval& a, const Interval& b) {
  Interval r(std::max(a.precision(), b.precision()));
  mpfr_max(r.lo(), a.lo(), b.lo(), kDown);
  mpfr_max(r.hi(), a.hi(), b.hi(), kUp);
  return checked(std::move(r));
}

MaybeInterval min(const Interval& a, const Interval& b) {
  Interval r(std::max(a.precision(), b.precision()));
  mpfr_min(r.lo(), a.lo(), b.lo(), kDown);
  mpfr_min(r.hi(), a.hi(), b.hi(), kUp);
  return checked(std::move(r));
}

}  // namespace onnx_tv::solver
