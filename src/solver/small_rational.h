#pragma once
// An exact rational that lives inline when numerator and denominator fit in 64 bits and on
// the heap (a GMP rational) otherwise. Monomial exponents are almost always small integers;
// storing them inline keeps a monomial product free of allocations, while the heap form
// keeps the arithmetic exact whatever the inputs (sums of float constants in exp arguments
// can have large denominators).
//
// The representation is canonical: a value that fits inline is always stored inline, in
// lowest terms with a positive denominator, so equality and hashing look at the fields.
#include <cstdint>
#include <string>

#include "solver/rational.h"

namespace onnx_tv::solver {

class SmallRational {
 public:
  SmallRational() : num_(0), den_(1) {}
  SmallRational(long long i) : num_(i), den_(1) {  // NOLINT: integers convert implicitly
    if (i == INT64_MIN) set_big(Rational(static_cast<long>(i)));
  }
  explicit SmallRational(const Rational& r) { assign(r); }
  SmallRational(const SmallRational& o) : num_(o.num_), den_(o.den_) {
    if (o.den_ == 0) copy_big(o);
  }
  SmallRational(SmallRational&& o) noexcept : num_(o.num_), den_(o.den_) {
    o.num_ = 0;
    o.den_ = 1;
  }
  SmallRational& operator=(const SmallRational& o) {
    if (this != &o) {
      release();
      num_ = o.num_;
      den_ = o.den_;
      if (o.den_ == 0) copy_big(o);
    }
    return *this;
  }
  SmallRational& operator=(SmallRational&& o) noexcept {
    if (this != &o) {
      release();
      num_ = o.num_;
      den_ = o.den_;
      o.num_ = 0;
      o.den_ = 1;
    }
    return *this;
  }
  ~SmallRational() { release(); }

  bool is_small() const { return den_ != 0; }
  bool is_integer() const { return den_ == 1; }
  // Only when is_small().
  int64_t num() const { return num_; }
  int64_t den() const { return den_; }

  int sign() const { return den_ != 0 ? (num_ > 0) - (num_ < 0) : big_sign(); }
  friend int sgn(const SmallRational& x) { return x.sign(); }
  Rational to_rational() const;
  long double to_long_double() const {
    if (den_ != 0) return static_cast<long double>(num_) / static_cast<long double>(den_);
    return big_to_long_double();
  }
  std::string str() const;  // as Rational::get_str: "n" or "n/d"
  uint64_t hash() const {
    if (den_ == 0) return big_hash();
    uint64_t h = uint64_t(num_) * 0x9e3779b97f4a7c15ULL ^ uint64_t(den_);
    h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
  }

  // Integers take the inline paths; fractions and overflows the out-of-line ones.
  friend SmallRational operator+(const SmallRational& a, const SmallRational& b) {
    int64_t r;
    if (a.den_ == 1 && b.den_ == 1 && !__builtin_add_overflow(a.num_, b.num_, &r) && r != INT64_MIN)
      return SmallRational(r, 1, Raw{});
    return add_slow(a, b);
  }
  friend SmallRational operator-(const SmallRational& a, const SmallRational& b) { return a + -b; }
  friend SmallRational operator*(const SmallRational& a, const SmallRational& b) {
    int64_t r;
    if (a.den_ == 1 && b.den_ == 1 && !__builtin_mul_overflow(a.num_, b.num_, &r) && r != INT64_MIN)
      return SmallRational(r, 1, Raw{});
    return mul_slow(a, b);
  }
  // b must be nonzero.
  friend SmallRational operator/(const SmallRational& a, const SmallRational& b) {
    return a * b.reciprocal();
  }
  SmallRational& operator+=(const SmallRational& b) { return *this = *this + b; }
  SmallRational& operator*=(const SmallRational& b) { return *this = *this * b; }
  SmallRational& operator/=(const SmallRational& b) { return *this = *this / b; }
  SmallRational reciprocal() const {  // of a nonzero value
    if (den_ != 0 && num_ != 0) return num_ > 0 ? SmallRational(den_, num_, Raw{}) : SmallRational(-den_, -num_, Raw{});
    return reciprocal_slow();
  }
  SmallRational operator-() const {
    if (den_ != 0) return SmallRational(-num_, den_, Raw{});  // num_ != INT64_MIN
    return neg_slow();
  }
  friend bool operator==(const SmallRational& a, const SmallRational& b) {
    if (a.den_ != 0 && b.den_ != 0) return a.num_ == b.num_ && a.den_ == b.den_;
    return a.den_ == 0 && b.den_ == 0 && big_equal(a, b);
  }
  friend int compare(const SmallRational& a, const SmallRational& b) {
    if (a.den_ == 1 && b.den_ == 1) return (a.num_ > b.num_) - (a.num_ < b.num_);
    return compare_slow(a, b);
  }
  friend bool operator<(const SmallRational& a, const SmallRational& b) { return compare(a, b) < 0; }
  friend bool operator>(const SmallRational& a, const SmallRational& b) { return compare(a, b) > 0; }
  friend bool operator<=(const SmallRational& a, const SmallRational& b) { return compare(a, b) <= 0; }
  friend bool operator>=(const SmallRational& a, const SmallRational& b) { return compare(a, b) >= 0; }

 private:
  struct Raw {};
  SmallRational(int64_t num, int64_t den, Raw) : num_(num), den_(den) {}
  static SmallRational add_slow(const SmallRational& a, const SmallRational& b);
  static SmallRational mul_slow(const SmallRational& a, const SmallRational& b);
  static int compare_slow(const SmallRational& a, const SmallRational& b);
  SmallRational neg_slow() const;
  SmallRational reciprocal_slow() const;
  int big_sign() const;
  long double big_to_long_double() const;
  uint64_t big_hash() const;
  void assign(const Rational& r);
  void set_big(const Rational& r);
  void copy_big(const SmallRational& o);
  void release() {
    if (den_ == 0) free_big();
  }
  void free_big();
  static bool big_equal(const SmallRational& a, const SmallRational& b);
  // Builds num/den given as 128-bit integers (den > 0, not necessarily reduced).
  static SmallRational from_wide(__int128 num, __int128 den);

  // Inline: num_/den_ with den_ > 0. Heap: den_ == 0 and num_ holds an mpq_ptr.
  int64_t num_;
  int64_t den_;
};

}  // namespace onnx_tv::solver
