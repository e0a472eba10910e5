// Rigorous signs: intervals hold the true value, and canonical forms of constants never rest
// on rounding (a max, an abs or a sqrt of a constant that long double gets wrong).
#include "solver/interval_evaluator.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

Rational no_symbol(const std::string& s) { throw InternalError("symbol " + s); }

// True value inside [lo, hi], checked against a 1000-bit reference computed by MPFR directly.
void expect_holds(const MaybeInterval& x, void (*f)(mpfr_ptr, mpfr_srcptr), long num, long den,
                  const std::string& what) {
  ASSERT_TRUE(x) << what;
  mpfr_t arg, ref;
  mpfr_init2(arg, 1000);
  mpfr_init2(ref, 1000);
  mpfr_set_si(arg, num, MPFR_RNDN);
  mpfr_div_si(arg, arg, den, MPFR_RNDN);
  f(ref, arg);
  EXPECT_TRUE(mpfr_lessequal_p(x->lo(), ref) && mpfr_lessequal_p(ref, x->hi())) << what;
  mpfr_sub(ref, x->hi(), x->lo(), MPFR_RNDU);
  EXPECT_LT(mpfr_get_d(ref, MPFR_RNDU), 1e-15) << what << " is tight";
  mpfr_clear(arg);
  mpfr_clear(ref);
}

TEST(Interval, FunctionsHoldTheirValue) {
  Context c;
  Value x = c.symbol("x");
  IntervalEvaluator ev(c, [](const std::string&) { return Rational(7, 3); }, 64);
  expect_holds(ev.eval(c.exp(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_exp(r, a, MPFR_RNDN); }, 7, 3, "exp");
  expect_holds(ev.eval(c.log(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_log(r, a, MPFR_RNDN); }, 7, 3, "log");
  expect_holds(ev.eval(c.sqrt(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_sqrt(r, a, MPFR_RNDN); }, 7, 3, "sqrt");
  expect_holds(ev.eval(c.erf(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_erf(r, a, MPFR_RNDN); }, 7, 3, "erf");
  expect_holds(ev.eval(c.sin(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_sin(r, a, MPFR_RNDN); }, 7, 3, "sin");
  expect_holds(ev.eval(c.cos(x)), [](mpfr_ptr r, mpfr_srcptr a) { mpfr_cos(r, a, MPFR_RNDN); }, 7, 3, "cos");
  expect_holds(ev.eval(c.pow(x, c.constant(Rational(1, 3)))),
               [](mpfr_ptr r, mpfr_srcptr a) { mpfr_cbrt(r, a, MPFR_RNDN); }, 7, 3, "x^(1/3)");
  expect_holds(ev.eval(c.exp(c.mul(c.constant(Rational(-5, 2)), x))),
               [](mpfr_ptr r, mpfr_srcptr a) {
                 mpfr_mul_si(r, a, -5, MPFR_RNDN);
                 mpfr_div_si(r, r, 2, MPFR_RNDN);
                 mpfr_exp(r, r, MPFR_RNDN);
               },
               7, 3, "exp(-5x/2)");
}

// sin and cos reach +-1 inside an interval that holds their extrema: bounds from the ends alone
// would miss them.
TEST(Interval, SinAndCosCoverTheirExtrema) {
  Interval around_half_pi(Rational(157, 100), 64);
  mpfr_set_si(around_half_pi.hi(), 2, MPFR_RNDU);  // [1.57, 2] holds pi/2
  MaybeInterval s = sin(around_half_pi);
  ASSERT_TRUE(s);
  EXPECT_EQ(mpfr_cmp_si(s->hi(), 1), 0);
  Interval around_pi(Rational(3), 64);
  mpfr_set_si(around_pi.hi(), 4, MPFR_RNDU);  // [3, 4] holds pi
  MaybeInterval k = cos(around_pi);
  ASSERT_TRUE(k);
  EXPECT_EQ(mpfr_cmp_si(k->lo(), -1), 0);
  EXPECT_LT(mpfr_cmp_si(k->hi(), 0), 0);
}

TEST(Interval, UndefinedIsUnknown) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  std::map<std::string, Rational> point = {{"x", Rational(0)}, {"y", Rational(2)}};
  IntervalEvaluator ev(c, [&](const std::string& s) { return point.at(s); }, 64);
  EXPECT_FALSE(ev.eval(c.recip(x)));                          // 1/0
  EXPECT_FALSE(ev.eval(c.add(c.exp(y), c.recip(c.sub(y, c.constant(2))))));  // 1/(y-2)
  EXPECT_FALSE(ev.eval(c.log(c.add(x, c.sin(x)))));           // log(0)
  EXPECT_FALSE(ev.eval(c.sqrt(c.sub(c.sin(x), c.exp(y)))));   // sqrt of a negative
  EXPECT_TRUE(ev.eval(c.sqrt(c.add(x, c.sin(x)))));           // sqrt(0) = 0
}

// L = a log 2 - b log 3 with a, b from a continued-fraction convergent of log 3 / log 2: about
// 1.0123e-11, two terms near 7.2e9 cancelling. long double evaluates it as -4.7e-10.
class CancellingConstant : public ::testing::Test {
 protected:
  Context c;
  Value x = c.symbol("x");
  Value L = c.sub(c.mul(c.constant(10439860591LL), c.log(c.constant(2))),
                  c.mul(c.constant(6586818670LL), c.log(c.constant(3))));
};

TEST_F(CancellingConstant, SignIsPositive) {
  EXPECT_EQ(c.compare(L, c.zero()), 1);
  EXPECT_EQ(c.compare(c.zero(), L), -1);
  EXPECT_EQ(rigorous_sign(c, L, c.zero(), no_symbol, 64), std::nullopt) << "64 bits cannot tell";
}

TEST_F(CancellingConstant, MaxAbsAndSqrtUseTheTrueSign) {
  std::vector<Value> args = {x, L, c.zero()};
  std::vector<Value> without_zero = {x, L};
  EXPECT_SAME(c, c.max(args), c.max(without_zero));
  EXPECT_NE(c.max(args), c.relu(x));
  EXPECT_SAME(c, c.mul(x, c.abs(L)), c.mul(x, L));
  EXPECT_NO_THROW(c.sqrt(L));
  EXPECT_THROW(c.sqrt(c.neg(L)), MathError);
}

// sin(1)^2 + cos(1)^2 - 1 is 0 in a form the solver does not reduce: no precision decides its
// sign, so max, abs and sqrt keep it as an atom instead of guessing.
TEST(RigorousSign, AZeroInAnotherFormIsUndecided) {
  Context c;
  Value x = c.symbol("x");
  Value one = c.one();
  Value z = c.sub(c.add(c.mul(c.sin(one), c.sin(one)), c.mul(c.cos(one), c.cos(one))), one);
  ASSERT_FALSE(c.as_rational(z));
  EXPECT_EQ(c.compare(z, c.zero()), std::nullopt);
  std::vector<Value> args = {x, z, c.zero()};
  EXPECT_EQ(c.max(args), c.max(args));
  EXPECT_NE(c.max(args), c.relu(x));
  std::vector<Value> with_z = {x, z};
  EXPECT_NE(c.max(args), c.max(with_z));
  EXPECT_NE(c.abs(z), z);
  EXPECT_NE(c.abs(z), c.neg(z));
  EXPECT_NO_THROW(c.sqrt(z));
}

}  // namespace
}  // namespace onnx_tv::solver
