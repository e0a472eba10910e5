#include "solver/rational.h"

#include <cmath>

#include "common/errors.h"

namespace onnx_tv::solver {
namespace {

struct FormatInfo {
  int precision;  // significand bits, the hidden bit included
  int min_exponent;  // exponent of the smallest normal number
};

FormatInfo info(FloatFormat f) {
  switch (f) {
    case FloatFormat::Float16: return {11, -14};
    case FloatFormat::BFloat16: return {8, -126};
    case FloatFormat::Float32: return {24, -126};
    case FloatFormat::Float64: return {53, -1022};
  }
  return {53, -1022};
}

Rational pow2(int e) {
  Rational r = 1;
  if (e >= 0) mpz_mul_2exp(r.get_num_mpz_t(), r.get_num_mpz_t(), e);
  else mpz_mul_2exp(r.get_den_mpz_t(), r.get_den_mpz_t(), -e);
  return r;
}

mpz_class floor_of(const Rational& r) {
  mpz_class f;
  mpz_fdiv_q(f.get_mpz_t(), r.get_num_mpz_t(), r.get_den_mpz_t());
  return f;
}

// The rational of smallest denominator in the interval between lo and hi (0 <= lo < hi),
// each end included or not. Walks the continued fraction: either an integer fits, or
// x = floor(lo) + 1/y with y in the mirrored interval.
Rational simplest_between(const Rational& lo, const Rational& hi, bool lo_in, bool hi_in) {
  mpz_class fl = floor_of(lo);
  bool lo_is_int = lo == Rational(fl);
  mpz_class cand = (lo_is_int && lo_in) ? fl : mpz_class(fl + 1);
  if (Rational(cand) < hi || (Rational(cand) == hi && hi_in)) return Rational(cand);
  Rational a = 1 / (hi - Rational(fl));
  if (lo_is_int) {
    // lo itself is excluded: y ranges over (a, infinity) or [a, infinity).
    mpz_class c = floor_of(a);
    mpz_class y = (Rational(c) == a && hi_in) ? c : mpz_class(c + 1);
    return Rational(fl) + Rational(1) / Rational(y);
  }
  Rational b = 1 / (lo - Rational(fl));
  Rational y = simplest_between(a, b, hi_in, lo_in);
  Rational r = Rational(fl) + 1 / y;
  r.canonicalize();
  return r;
}

}  // namespace

Rational float_meaning(double value, FloatFormat format) {
  if (!std::isfinite(value)) throw InternalError("float_meaning of a non-finite value");
  if (value == 0) return 0;
  const FormatInfo f = info(format);
  const bool negative = value < 0;
  const double a = std::fabs(value);
  Rational v(a);  // exact: every double is a dyadic rational
  int k = 0;
  const double frac = std::frexp(a, &k);  // a = frac * 2^k, frac in [0.5, 1)
  const int lead = std::max(k - 1, f.min_exponent);
  const int ulp_exp = lead - (f.precision - 1);
  Rational ulp = pow2(ulp_exp);
  Rational significand = v / ulp;
  if (significand.get_den() != 1) {
    throw InternalError("float_meaning: " + std::to_string(value) +
                        " is not representable in its format");
  }
  if (v.get_den() == 1) return negative ? Rational(-v) : v;  // integers mean themselves
  // Ties go to the even significand, so only then do the midpoints round to `value`.
  const bool even = mpz_even_p(significand.get_num_mpz_t()) != 0;
  // Just above a power of two the spacing below is half the spacing above.
  const bool power_of_two = frac == 0.5 && k - 1 > f.min_exponent;
  Rational lo = v - (power_of_two ? ulp / 4 : ulp / 2);
  Rational hi = v + ulp / 2;
  // The simplest rational stands for the constant only when q*q*w < 1 (w the interval's
  // width): then no other rational with that property fits (two would differ by at least
  // 1/(q1*q2) > w), so the meaning is the same whichever type wrote the number. Otherwise
  // float16(2^-12) would mean 1/4095, the simplest of its wide interval.
  Rational r = simplest_between(lo, hi, even, even);
  const Rational width = hi - lo;
  const mpz_class q = r.get_den();
  if (Rational(q * q) * width >= 1) r = v;
  return negative ? Rational(-r) : r;
}

std::string to_string(const Rational& r) { return r.get_str(); }

std::optional<long long> as_int64(const Rational& r) {
  if (r.get_den() != 1 || !r.get_num().fits_slong_p()) return std::nullopt;
  return static_cast<long long>(r.get_num().get_si());
}

}  // namespace onnx_tv::solver
