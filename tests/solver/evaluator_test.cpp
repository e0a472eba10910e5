#include "solver/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

class EvaluatorTest : public ::testing::Test {
 protected:
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  std::map<std::string, Rational> point = {{"x", Rational(1, 2)}, {"y", Rational(-3)}};
  int calls = 0;
  Evaluator make() {
    return Evaluator(c, [this](const std::string& s) {
      ++calls;
      return point.at(s);
    });
  }
  Value k(long long i) { return c.constant(i); }
};

void expect_near_rel(long double got, long double expected, const std::string& what) {
  long double tol = 1e-15L * std::max<long double>(1, std::fabs(expected));
  EXPECT_NEAR(double(got), double(expected), double(tol))
      << what << ": got " << double(got) << ", expected " << double(expected);
}

TEST_F(EvaluatorTest, ExactPolynomials) {
  Evaluator ev = make();
  Value p = c.add(c.mul(x, c.mul(x, y)), c.constant(Rational(1, 3)));  // x^2 y + 1/3
  EXPECT_EQ(ev.exact(p), Rational(-3, 4) + Rational(1, 3)) << c.to_string(p);
  Value q = c.div(x, c.add(y, k(1)));  // x / (y + 1) with an inverse atom
  EXPECT_EQ(ev.exact(q), Rational(-1, 4)) << c.to_string(q);
  Value r = c.div(k(1), c.mul(x, x));  // negative exponent of a symbol
  EXPECT_EQ(ev.exact(r), Rational(4)) << c.to_string(r);
  std::vector<Value> xs = {x, y};
  EXPECT_EQ(ev.exact(c.max(xs)), Rational(1, 2));
  EXPECT_EQ(ev.exact(c.min(xs)), Rational(-3));
  EXPECT_EQ(ev.exact(c.abs(y)), Rational(3));
  EXPECT_EQ(ev.exact(c.exp(x)), std::nullopt);
  EXPECT_EQ(ev.exact(c.sqrt(x)), std::nullopt);
  EXPECT_EQ(ev.exact(Context::neg_inf()), std::nullopt);
  EXPECT_EQ(calls, 2) << "each symbol is asked for once";
}

TEST_F(EvaluatorTest, ApproxFunctions) {
  Evaluator ev = make();
  const long double X = 0.5L, Y = -3.0L;
  expect_near_rel(ev.approx(c.exp(x)), std::exp(X), "exp(x)");
  expect_near_rel(ev.approx(c.exp(c.mul(c.constant(Rational(1, 3)), y))), std::exp(Y / 3), "exp(y/3)");
  expect_near_rel(ev.approx(c.exp(c.constant(Rational(1, 3)))), std::exp(1.0L / 3), "exp(1/3)");
  expect_near_rel(ev.approx(c.log(c.add(x, k(1)))), std::log(X + 1), "log(x+1)");
  expect_near_rel(ev.approx(c.sqrt(x)), std::sqrt(X), "sqrt(x)");
  expect_near_rel(ev.approx(c.recip(c.sqrt(x))), 1 / std::sqrt(X), "rsqrt(x)");
  expect_near_rel(ev.approx(c.sigmoid(y)), 1 / (1 + std::exp(-Y)), "sigmoid(y)");
  expect_near_rel(ev.approx(c.tanh(x)), std::tanh(X), "tanh(x)");
  expect_near_rel(ev.approx(c.erf(y)), std::erf(Y), "erf(y)");
  expect_near_rel(ev.approx(c.sin(x)), std::sin(X), "sin(x)");
  expect_near_rel(ev.approx(c.cos(y)), std::cos(Y), "cos(y)");
  expect_near_rel(ev.approx(c.abs(y)), 3, "abs(y)");
  expect_near_rel(ev.approx(c.pow(x, c.constant(Rational(1, 3)))), std::pow(X, 1.0L / 3), "x^(1/3)");
  expect_near_rel(ev.approx(c.relu(y)), 0, "relu(y)");
  std::vector<Value> xs = {x, y};
  expect_near_rel(ev.approx(c.max(xs)), X, "max(x,y)");
  expect_near_rel(ev.approx(c.log(c.mul(k(3), c.exp(x)))), X + std::log(3.0L), "log(3 exp(x))");
  EXPECT_TRUE(std::isinf(ev.approx(Context::neg_inf())));
  EXPECT_TRUE(std::isnan(ev.approx(c.sqrt(y)))) << "sqrt of a negative value";
  EXPECT_TRUE(std::isnan(ev.approx(c.log(y)))) << "log of a negative value";
}

}  // namespace
}  // namespace onnx_tv::solver
