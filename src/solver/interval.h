#pragma once
// Closed intervals of reals with MPFR endpoints, rounded outward: the result of every operation
// holds the exact result for every choice of arguments inside its operands. They decide signs
// of constants with transcendental atoms and confirm witnesses, where long double would let
// rounding error decide (a canonical form or a NOT EQUIVALENT must never rest on it).
//
// An operation that is undefined somewhere on its operands (log of an interval that reaches 0,
// 1/x of one that holds 0) has no result: nullopt, which callers read as "unknown". So does
// one whose endpoints would be NaN (inf - inf after an overflow).
#include <mpfr.h>

#include <optional>
#include <string>

#include "solver/rational.h"

namespace onnx_tv::solver {

class Interval {
 public:
  explicit Interval(mpfr_prec_t precision);               // [0, 0]
  Interval(const Rational& q, mpfr_prec_t precision);     // the tightest interval holding q
  Interval(const Interval& other);
  Interval(Interval&& other) noexcept;
  Interval& operator=(const Interval& other);
  Interval& operator=(Interval&& other) noexcept;
  ~Interval();

  mpfr_srcptr lo() const { return lo_; }
  mpfr_srcptr hi() const { return hi_; }
  mpfr_ptr lo() { return lo_; }
  mpfr_ptr hi() { return hi_; }
  mpfr_prec_t precision() const { return mpfr_get_prec(lo_); }

  // +1 when every element is > 0, -1 when every element is < 0, 0 for exactly [0, 0];
  // nullopt when it holds 0 and other numbers too.
  std::optional<int> sign() const;
  bool holds_zero() const;
  // No common element: every element of a lies below every element of b, or above.
  friend bool disjoint(const Interval& a, const Interval& b);
  long double width() const;                    // hi - lo, rounded up
  std::string midpoint_text(int digits) const;  // for printing


 private:
  mpfr_t lo_, hi_;
};

using MaybeInterval = std::optional<Interval>;

// In-place forms for hot loops, without allocation: r = a + b, r = a * b (r may be a or b).
// false when the result would be NaN (r is then unspecified).
bool add_to(Interval& r, const Interval& a, const Interval& b);
bool mul_to(Interval& r, const Interval& a, const Interval& b);

MaybeInterval add(const Interval& a, const Interval& b);
MaybeInterval sub(const Interval& a, const Interval& b);
MaybeInterval mul(const Interval& a, const Interval& b);
MaybeInterval recip(const Interval& a);                  // unknown when a holds 0
MaybeInterval pow_int(const Interval& a, long n);        // a^n; n < 0 needs 0 outside a
MaybeInterval pow_rational(const Interval& a, const Rational& q);  // a^q = exp(q log a), a > 0
MaybeInterval exp(const Interval& a);
MaybeInterval log(const Interval& a);   // unknown unless a > 0
MaybeInterval sqrt(const Interval& a);  // unknown unless a >= 0
MaybeInterval erf(const Interval& a);
MaybeInterval sin(const Interval& a);
MaybeInterval cos(const Interval& a);
MaybeInterval abs(const Interval& a);
MaybeInterval max(const Interval& a, const Interval& b);
MaybeInterval min(const Interval& a, const Interval& b);

}  // namespace onnx_tv::solver
