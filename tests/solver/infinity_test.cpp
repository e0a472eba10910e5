#include <gtest/gtest.h>

#include <vector>

#include "solver/context.h"
#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

class Infinity : public ::testing::Test {
 protected:
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  Value inf = Context::pos_inf(), ninf = Context::neg_inf();
  Value k(long long i) { return c.constant(i); }
};

// Runs f and checks it throws a MathError whose message mentions `needle`.
template <class F>
void expect_math_error(F f, const std::string& needle, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": expected MathError, got a value";
  } catch (const MathError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << what << ": message '" << e.what() << "' lacks '" << needle << "'";
  }
}

TEST_F(Infinity, DefinedResults) {
  EXPECT_SAME(c, c.add(x, ninf), ninf);
  EXPECT_SAME(c, c.add(ninf, k(3)), ninf);
  EXPECT_SAME(c, c.add(inf, inf), inf);
  EXPECT_SAME(c, c.sub(ninf, x), ninf);
  EXPECT_SAME(c, c.sub(x, ninf), inf);
  EXPECT_SAME(c, c.exp(ninf), c.zero());
  EXPECT_SAME(c, c.exp(inf), inf);
  EXPECT_SAME(c, c.mul(ninf, k(2)), ninf);
  EXPECT_SAME(c, c.mul(ninf, k(-2)), inf);
  EXPECT_SAME(c, c.mul(ninf, ninf), inf);
  EXPECT_SAME(c, c.mul(inf, c.exp(c.constant(Rational(1, 3)))), inf);
  EXPECT_SAME(c, c.recip(inf), c.zero());
  EXPECT_SAME(c, c.recip(ninf), c.zero());
  EXPECT_SAME(c, c.div(x, inf), c.zero());
  EXPECT_SAME(c, c.div(ninf, k(4)), ninf);
  EXPECT_SAME(c, c.neg(inf), ninf);
  std::vector<Value> a = {x, ninf};
  EXPECT_SAME(c, c.max(a), x);
  std::vector<Value> b = {x, inf, y};
  EXPECT_SAME(c, c.max(b), inf);
  EXPECT_SAME(c, c.min(b), c.min(std::vector<Value>{x, y}));
  std::vector<Value> only = {ninf, ninf};
  EXPECT_SAME(c, c.max(only), ninf);
  EXPECT_SAME(c, c.relu(ninf), c.zero());
  EXPECT_SAME(c, c.relu(inf), inf);
  EXPECT_SAME(c, c.sigmoid(ninf), c.zero());
  EXPECT_SAME(c, c.sigmoid(inf), c.one());
  EXPECT_SAME(c, c.tanh(inf), c.one());
  EXPECT_SAME(c, c.tanh(ninf), k(-1));
  EXPECT_SAME(c, c.erf(ninf), k(-1));
  EXPECT_SAME(c, c.log(inf), inf);
  EXPECT_SAME(c, c.sqrt(inf), inf);
  EXPECT_SAME(c, c.abs(ninf), inf);
  std::vector<Value> s = {x, ninf, y};
  EXPECT_SAME(c, c.sum(s), ninf);
  EXPECT_TRUE(c.is_constant(ninf));
  EXPECT_EQ(c.term_count(ninf), 0u);
}

TEST_F(Infinity, MaskedSoftmaxEntryIsExactlyZero) {
  Value z = c.symbol("z");
  std::vector<Value> row = {x, c.add(y, ninf), z};  // y masked out
  Value m = c.max(row);
  EXPECT_SAME(c, m, c.max(std::vector<Value>{x, z}));
  std::vector<Value> e;
  for (Value v : row) e.push_back(c.exp(c.sub(v, m)));
  EXPECT_SAME(c, e[1], c.zero());
  Value s = c.sum(e);
  EXPECT_SAME(c, c.div(e[1], s), c.zero());
  EXPECT_SAME(c, c.div(e[0], s), c.div(c.exp(x), c.add(c.exp(x), c.exp(z))));
}

TEST_F(Infinity, UndefinedResultsRaise) {
  expect_math_error([&] { c.mul(ninf, c.zero()); }, "0 * inf", "mul(-inf, 0)");
  expect_math_error([&] { c.add(inf, ninf); }, "inf - inf", "add(inf, -inf)");
  expect_math_error([&] { c.mul(inf, x); }, "symbolic", "mul(inf, x)");
  expect_math_error([&] { c.div(x, c.zero()); }, "division by zero", "div(x, 0)");
  expect_math_error([&] { c.recip(c.zero()); }, "division by zero", "recip(0)");
  expect_math_error([&] { c.log(c.zero()); }, "log", "log(0)");
  expect_math_error([&] { c.log(k(-1)); }, "log", "log(-1)");
  expect_math_error([&] { c.log(c.exp(ninf)); }, "log", "log(exp(-inf))");
  expect_math_error([&] { c.log(ninf); }, "log", "log(-inf)");
  expect_math_error([&] { c.sqrt(k(-4)); }, "sqrt", "sqrt(-4)");
  expect_math_error([&] { c.sqrt(ninf); }, "sqrt", "sqrt(-inf)");
  expect_math_error([&] { c.div(inf, inf); }, "0 * inf", "inf / inf");
  expect_math_error([&] { c.sin(inf); }, "sin", "sin(inf)");
  expect_math_error([&] { c.log(c.neg(c.exp(c.constant(Rational(1, 3))))); }, "log",
                    "log(-exp(1/3))");
  std::vector<Value> s = {x, inf, ninf};
  expect_math_error([&] { c.sum(s); }, "inf - inf", "sum(x, inf, -inf)");
  // MathError is an input error: the user's model is wrong.
  EXPECT_THROW(c.recip(c.zero()), InputError);
}

}  // namespace
}  // namespace onnx_tv::solver
