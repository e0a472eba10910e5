// The indicator algebra of integer inputs (solver/indicators.cpp): [n = v]^2 = [n = v],
// indicators of one input at two values multiply to 0, and [n = lo] is 1 minus the others, so
// equal functions of integer inputs have equal canonical forms.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "solver/context.h"
#include "solver/evaluator.h"

namespace onnx_tv::solver {
namespace {

struct Indicators : ::testing::Test {
  Context c;
  Value n = c.integer_input("n", 0, 4);  // n in {0, 1, 2, 3}
  Value m = c.integer_input("m", 0, 3);
  Value k(long long v) { return c.constant(v); }
};

TEST_F(Indicators, AnIndicatorIsIdempotentAndExclusive) {
  const Value i1 = c.indicator("n", 1), i2 = c.indicator("n", 2);
  EXPECT_EQ(c.mul(i1, i1), i1);
  EXPECT_EQ(c.mul(i1, i2), c.zero());
  EXPECT_EQ(c.pow(i2, k(3)), i2);
  // Indicators of two inputs are independent.
  EXPECT_NE(c.mul(i1, c.indicator("m", 1)), c.zero());
}

TEST_F(Indicators, TheIndicatorsOfAnInputSumToOne) {
  std::vector<Value> all;
  for (int v = 0; v < 4; ++v) all.push_back(c.indicator("n", v));
  EXPECT_EQ(c.sum(all), c.one());
  EXPECT_EQ(c.indicator("n", 4), c.zero());   // outside the range
  EXPECT_EQ(c.indicator("n", -1), c.zero());
}

TEST_F(Indicators, EqualFunctionsHaveEqualForms) {
  // n (n - 1) (n - 2) (n - 3) vanishes on {0, 1, 2, 3}.
  Value p = c.one();
  for (int v = 0; v < 4; ++v) p = c.mul(p, c.sub(n, k(v)));
  EXPECT_EQ(p, c.zero());
  // n^2 is the sum of v^2 [n = v]; written either way, one form.
  std::vector<Value> squares;
  for (int v = 0; v < 4; ++v) squares.push_back(c.mul(k(v * v), c.indicator("n", v)));
  EXPECT_EQ(c.mul(n, n), c.sum(squares));
}

TEST_F(Indicators, ValuesOfOneInputAreReadAtEachPoint) {
  const auto f = c.as_integer_function(c.add(c.mul(n, k(2)), k(1)));  // 2n + 1
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->input, "n");
  EXPECT_EQ(f->lo, 0);
  ASSERT_EQ(f->values.size(), 4u);
  for (int v = 0; v < 4; ++v) EXPECT_EQ(f->values[size_t(v)], Rational(2 * v + 1));
  // A function of two inputs is a count (counters.cpp): an integer input of its own over the
  // values it takes, defined by the sum. A function of a real symbol is no integer function.
  const auto sum = c.as_integer_function(c.add(n, m));
  ASSERT_TRUE(sum.has_value());
  EXPECT_NE(c.counter(sum->input), nullptr);
  EXPECT_EQ(sum->lo, 0);
  EXPECT_EQ(sum->values.size(), 6u);  // 0 .. 5
  EXPECT_EQ(sum->values[5], Rational(5));
  EXPECT_FALSE(c.as_integer_function(c.mul(n, c.symbol("x"))).has_value());
  const auto constant = c.as_integer_function(k(5));
  ASSERT_TRUE(constant.has_value());
  EXPECT_TRUE(constant->input.empty());
  // Built back from its values, it is the same form.
  std::vector<Value> vals;
  for (const Rational& q : f->values) vals.push_back(c.constant(q));
  EXPECT_EQ(c.from_integer_function("n", 0, vals), c.add(c.mul(n, k(2)), k(1)));
}

TEST_F(Indicators, DividingByAnIndicatorIsAnError) {
  EXPECT_THROW(c.recip(c.indicator("n", 2)), MathError);
}

TEST_F(Indicators, EvaluationPicksTheInputsValue) {
  Evaluator at2(c, [](const std::string& s) { return Rational(s == "n" ? 2 : 1); });
  EXPECT_EQ(at2.exact(c.indicator("n", 2)), Rational(1));
  EXPECT_EQ(at2.exact(c.indicator("n", 0)), Rational(0));
  EXPECT_EQ(at2.exact(c.add(c.mul(n, n), m)), Rational(5));
  EXPECT_EQ(at2.approx(c.indicator("n", 3)), 0.0L);
}

TEST_F(Indicators, RangesAreKept) {
  EXPECT_EQ(c.integer_range("n"), std::make_optional(std::make_pair<int64_t, int64_t>(0, 4)));
  EXPECT_FALSE(c.integer_range("x").has_value());
  EXPECT_EQ(c.to_string(c.indicator("n", 3)), "[n = 3]");
}

}  // namespace
}  // namespace onnx_tv::solver
