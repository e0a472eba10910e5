// Case analysis on max, min and abs atoms: forms that differ as polynomials over those atoms
// but are one function piecewise are equal; a case that is feasible and differs never is.
#include <gtest/gtest.h>

#include "solver/context.h"

namespace onnx_tv::solver {
namespace {

struct CaseSplit : ::testing::Test {
  Context ctx;
  Value x = ctx.symbol("x"), y = ctx.symbol("y"), z = ctx.symbol("z");
  Value c(long long i) { return ctx.constant(i); }
  Value max2(Value a, Value b) { std::vector<Value> v{a, b}; return ctx.max(v); }
  Value min2(Value a, Value b) { std::vector<Value> v{a, b}; return ctx.min(v); }
  bool equal(Value a, Value b, std::string* why = nullptr) {
    EXPECT_NE(a, b) << "the forms are equal already: " << ctx.to_string(a);
    return ctx.equal_by_cases(a, b, why);
  }
};

TEST_F(CaseSplit, ReluDifferenceIsTheIdentity) {
  EXPECT_TRUE(equal(ctx.sub(ctx.relu(x), ctx.relu(ctx.neg(x))), x));
}

TEST_F(CaseSplit, ReluSumIsAbs) {
  EXPECT_TRUE(equal(ctx.add(ctx.relu(x), ctx.relu(ctx.neg(x))), ctx.abs(x)));
}

TEST_F(CaseSplit, MaxPlusMinIsTheSum) {
  const Value a = ctx.add(x, c(1)), b = ctx.mul(c(2), y);
  EXPECT_TRUE(equal(ctx.add(max2(a, b), min2(a, b)), ctx.add(a, b)));
  EXPECT_TRUE(equal(ctx.sub(max2(a, b), min2(a, b)), ctx.abs(ctx.sub(a, b))));
}

TEST_F(CaseSplit, SquareOfAbs) {
  EXPECT_TRUE(equal(ctx.mul(ctx.abs(x), ctx.abs(x)), ctx.mul(x, x)));
}

TEST_F(CaseSplit, NestedAndInsideProducts) {
  // relu(relu(x) - 1) = relu(x - 1); relu(x) * relu(-x) = 0.
  EXPECT_TRUE(equal(ctx.relu(ctx.sub(ctx.relu(x), c(1))), ctx.relu(ctx.sub(x, c(1)))));
  EXPECT_TRUE(equal(ctx.mul(ctx.relu(x), ctx.relu(ctx.neg(x))), c(0)));
}

TEST_F(CaseSplit, FeasibleDifferingCaseIsNeverEqual) {
  std::string why;
  // relu(x) + relu(-x) is |x|, not x: the case x <= 0 differs.
  EXPECT_FALSE(equal(ctx.add(ctx.relu(x), ctx.relu(ctx.neg(x))), x, &why));
  EXPECT_NE(why.find("still leaves the difference"), std::string::npos) << why;
  // max(x, y) is not x, though it is where x >= y.
  EXPECT_FALSE(equal(max2(x, y), x));
  // relu(x - 1) and relu(x) differ on 0 < x < 1 (and beyond, by 1).
  EXPECT_FALSE(equal(ctx.relu(ctx.sub(x, c(1))), ctx.relu(x)));
  // Zero where x = 0 only: a case x <= 0 and -x <= 0 is not empty, and there x = 0 decides.
  EXPECT_FALSE(equal(ctx.mul(ctx.relu(x), c(2)), ctx.add(ctx.relu(x), ctx.relu(ctx.neg(x)))));
}

TEST_F(CaseSplit, TooManyAtomsSaysWhy) {
  std::vector<Value> parts;
  for (int i = 0; i < 6; ++i) {  // two atoms each: relu(s) and relu(-s)
    const Value s = ctx.symbol("s" + std::to_string(i));
    parts.push_back(ctx.sub(ctx.relu(s), ctx.relu(ctx.neg(s))));
  }
  std::vector<Value> syms;
  for (int i = 0; i < 6; ++i) syms.push_back(ctx.symbol("s" + std::to_string(i)));
  std::string why;
  EXPECT_FALSE(equal(ctx.sum(parts), ctx.sum(syms), &why));
  EXPECT_NE(why.find("at most 10"), std::string::npos) << why;
  // Ten atoms (1024 cases) are within the limit.
  parts.pop_back();
  syms.pop_back();
  EXPECT_TRUE(equal(ctx.sum(parts), ctx.sum(syms)));
}

TEST_F(CaseSplit, WithoutExtremesNothingToSplit) {
  std::string why = "unset";
  EXPECT_FALSE(equal(ctx.mul(x, y), ctx.mul(x, z), &why));
  EXPECT_EQ(why, "");
}

}  // namespace
}  // namespace onnx_tv::solver
