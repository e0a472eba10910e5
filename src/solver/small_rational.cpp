// The out-of-line paths of SmallRational: fractions in 128-bit arithmetic, and the heap form
// for values that leave 64 bits.
#include "solver/small_rational.h"

#include <cmath>
#include <limits>

#include "common/errors.h"

namespace onnx_tv::solver {
namespace {

using u128 = unsigned __int128;

u128 gcd128(u128 a, u128 b) {
  while (b != 0) {
    // Most operands fit 64 bits; their remainder is far cheaper there.
    if ((a >> 64) == 0 && (b >> 64) == 0) {
      uint64_t x = uint64_t(a), y = uint64_t(b);
      while (y != 0) {
        uint64_t t = x % y;
        x = y;
        y = t;
      }
      return x;
    }
    u128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

u128 magnitude(__int128 x) { return x < 0 ? u128(-x) : u128(x); }

void set_wide(mpz_ptr z, __int128 v) {
  u128 m = magnitude(v);
  mpz_set_ui(z, uint64_t(m >> 64));
  mpz_mul_2exp(z, z, 64);
  mpz_add_ui(z, z, uint64_t(m));
  if (v < 0) mpz_neg(z, z);
}

mpq_ptr big_of(int64_t bits) { return reinterpret_cast<mpq_ptr>(bits); }

}  // namespace

void SmallRational::assign(const Rational& r) {
  mpz_srcptr n = r.get_num_mpz_t();
  mpz_srcptr d = r.get_den_mpz_t();
  // Inline when both fit int64 (the numerator not INT64_MIN, so negation stays inline).
  if (mpz_fits_slong_p(n) && mpz_fits_slong_p(d) && mpz_cmp_si(n, INT64_MIN) != 0) {
    num_ = mpz_get_si(n);
    den_ = mpz_get_si(d);
    return;
  }
  set_big(r);
}

void SmallRational::set_big(const Rational& r) {
  mpq_ptr q = new __mpq_struct;
  mpq_init(q);
  mpq_set(q, r.get_mpq_t());
  num_ = reinterpret_cast<int64_t>(q);
  den_ = 0;
}

void SmallRational::copy_big(const SmallRational& o) {
  mpq_ptr q = new __mpq_struct;
  mpq_init(q);
  mpq_set(q, big_of(o.num_));
  num_ = reinterpret_cast<int64_t>(q);
}

void SmallRational::free_big() {
  mpq_ptr q = big_of(num_);
  mpq_clear(q);
  delete q;
  num_ = 0;
  den_ = 1;
}

bool SmallRational::big_equal(const SmallRational& a, const SmallRational& b) {
  return mpq_equal(big_of(a.num_), big_of(b.num_)) != 0;
}

int SmallRational::big_sign() const { return mpq_sgn(big_of(num_)); }

uint64_t SmallRational::big_hash() const {
  mpq_srcptr q = big_of(num_);
  uint64_t h = 0x6b1f;
  for (mpz_srcptr z : {mpq_numref(q), mpq_denref(q)}) {
    h = (h ^ uint64_t(mpz_sgn(z) + 7)) * 0x9e3779b97f4a7c15ULL;
    const mp_limb_t* p = mpz_limbs_read(z);
    for (size_t i = 0, n = mpz_size(z); i < n; ++i) h = (h ^ (h >> 31) ^ uint64_t(p[i])) * 0xbf58476d1ce4e5b9ULL;
  }
  return h ^ (h >> 29);
}

Rational SmallRational::to_rational() const {
  if (den_ == 0) return Rational(big_of(num_));
  Rational r;
  mpq_set_si(r.get_mpq_t(), static_cast<long>(num_), static_cast<unsigned long>(den_));
  return r;  // already in lowest terms
}

long double SmallRational::big_to_long_double() const {
  const Rational r = to_rational();
  long en = 0, ed = 0;
  double mn = mpz_get_d_2exp(&en, r.get_num_mpz_t());
  double md = mpz_get_d_2exp(&ed, r.get_den_mpz_t());
  return std::ldexp(static_cast<long double>(mn) / md, int(en - ed));
}

std::string SmallRational::str() const {
  if (den_ == 1) return std::to_string(num_);
  return to_rational().get_str();
}

SmallRational SmallRational::from_wide(__int128 num, __int128 den) {
  u128 g = gcd128(magnitude(num), u128(den));
  if (g > 1) {
    num /= __int128(g);
    den /= __int128(g);
  }
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  if (num <= kMax && num >= -kMax && den <= kMax) return SmallRational(int64_t(num), int64_t(den), Raw{});
  Rational r;
  set_wide(r.get_num_mpz_t(), num);
  set_wide(r.get_den_mpz_t(), den);
  SmallRational out;
  out.set_big(r);
  return out;
}

SmallRational SmallRational::add_slow(const SmallRational& a, const SmallRational& b) {
  if (a.den_ != 0 && b.den_ != 0) {
    // |n| < 2^63 and d < 2^63, so n1*d2 + n2*d1 and d1*d2 fit in 127 bits.
    __int128 n = __int128(a.num_) * b.den_ + __int128(b.num_) * a.den_;
    return from_wide(n, __int128(a.den_) * b.den_);
  }
  return SmallRational(Rational(a.to_rational() + b.to_rational()));
}

SmallRational SmallRational::mul_slow(const SmallRational& a, const SmallRational& b) {
  if (a.den_ != 0 && b.den_ != 0) return from_wide(__int128(a.num_) * b.num_, __int128(a.den_) * b.den_);
  return SmallRational(Rational(a.to_rational() * b.to_rational()));
}

SmallRational SmallRational::neg_slow() const { return SmallRational(Rational(-to_rational())); }

SmallRational SmallRational::reciprocal_slow() const {
  if (sign() == 0) throw InternalError("reciprocal of zero");
  return SmallRational(Rational(1 / to_rational()));
}

int SmallRational::compare_slow(const SmallRational& a, const SmallRational& b) {
  if (a.den_ != 0 && b.den_ != 0) {
    __int128 x = __int128(a.num_) * b.den_, y = __int128(b.num_) * a.den_;
    return (x > y) - (x < y);
  }
  int c = cmp(a.to_rational(), b.to_rational());
  return (c > 0) - (c < 0);
}

}  // namespace onnx_tv::solver
