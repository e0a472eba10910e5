#include <cmath>

#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using ElementwiseTest = OpTest;

TEST_F(ElementwiseTest, AddBroadcastsRowAgainstMatrix) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({3}, {10, 20, 30});
  expect_ints(run1(node("Add", 13, 2), {&a, &b}), {2, 3}, {11, 22, 33, 14, 25, 36});
}

TEST_F(ElementwiseTest, SubBroadcastsBothWays) {
  Tensor a = floats({2, 1}, {1, 2});
  Tensor b = floats({1, 3}, {1, 2, 3});
  expect_ints(run1(node("Sub", 14, 2), {&a, &b}), {2, 3}, {0, -1, -2, 1, 0, -1});
}

TEST_F(ElementwiseTest, Opset6BroadcastsBOnlyWhenAskedAtItsAxis) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor col = floats({2}, {10, 20});
  auto at0 = node("Add", 6, 2, 1, {{"broadcast", int_attr(1)}, {"axis", int_attr(0)}});
  expect_ints(run1(at0, {&a, &col}), {2, 3}, {11, 12, 13, 24, 25, 26});
  Tensor row = floats({3}, {10, 20, 30});
  auto trailing = node("Mul", 6, 2, 1, {{"broadcast", int_attr(1)}});
  expect_ints(run1(trailing, {&a, &row}), {2, 3}, {10, 40, 90, 40, 100, 180});
  // Without broadcast=1 the shapes must be equal, even where numpy would broadcast.
  EXPECT_THROW_MSG(run1(node("Sub", 6, 2), {&a, &row}), InputError, "/test/Sub", "equal");
  EXPECT_THROW_MSG(run1(at0, {&a, &row}), InputError, "do not broadcast");
  EXPECT_EQ(find_op("", "Add", 5), nullptr);  // opset 1's consumed_inputs form is not modeled
}

TEST_F(ElementwiseTest, VariadicMaxMinSumMeanBroadcast) {
  Tensor a = floats({2, 2}, {1, 5, -3, 4});
  Tensor b = floats({2}, {2, 2});
  Tensor c = floats({1}, {0});
  expect_ints(run1(node("Max", 13, 3), {&a, &b, &c}), {2, 2}, {2, 5, 2, 4});
  expect_ints(run1(node("Min", 13, 3), {&a, &b, &c}), {2, 2}, {0, 0, -3, 0});
  expect_ints(run1(node("Sum", 13, 3), {&a, &b, &c}), {2, 2}, {3, 7, -1, 6});
  expect_rationals(run1(node("Mean", 13, 2), {&a, &b}), {2, 2},
                   {Rational(3, 2), Rational(7, 2), Rational(-1, 2), 3});
  expect_ints(run1(node("Abs", 13, 1), {&a}), {2, 2}, {1, 5, 3, 4});
  EXPECT_THROW_MSG(run1(node("Sum", 6, 2), {&a, &b}), InputError, "before opset 8");
  // On symbols Max stays an atom, the same whichever order the inputs come in.
  Tensor x = symbols("x", {1}), y = symbols("y", {1});
  EXPECT_EQ(run1(node("Max", 13, 2), {&x, &y}).data[0], run1(node("Max", 13, 2), {&y, &x}).data[0]);
}

TEST_F(ElementwiseTest, MulAndDivOfFloatsAreExact) {
  Tensor a = floats({2}, {1, 3});
  Tensor b = floats({2}, {3, 4});
  expect_ints(run1(node("Mul", 13, 2), {&a, &b}), {2}, {3, 12});
  expect_rationals(run1(node("Div", 13, 2), {&a, &b}), {2}, {Rational(1, 3), Rational(3, 4)});
}

TEST_F(ElementwiseTest, SinAndCosOfConstantsAreExactAtomsWithTheRightValue) {
  Tensor x = rationals({3}, {Rational(0), Rational(1, 2), Rational(-3)});
  Tensor s = run1(node("Sin", 7, 1), {&x});
  Tensor c = run1(node("Cos", 7, 1), {&x});
  EXPECT_EQ(s.dtype, DType::Float);
  EXPECT_EQ(s.data[0], ctx.zero());  // sin(0) = 0 and cos(0) = 1 exactly
  EXPECT_EQ(c.data[0], ctx.one());
  EXPECT_FALSE(ctx.as_rational(s.data[1]));  // sin(1/2) stays an atom, never a rounded float
  expect_near(s, {0, std::sin(0.5L), std::sin(-3.0L)});
  expect_near(c, {1, std::cos(0.5L), std::cos(-3.0L)});
}

TEST_F(ElementwiseTest, SinAndCosOfSymbolsAreCanonicalAtoms) {
  Tensor x = symbols("x", {1});
  Value s = run1(node("Sin", 7, 1), {&x}).data[0];
  Value c = run1(node("Cos", 7, 1), {&x}).data[0];
  // A RoPE rotation is linear in sin and cos: the same angle gives the same atom on both sides.
  EXPECT_EQ(run1(node("Sin", 7, 1), {&x}).data[0], s);
  EXPECT_NE(s, c);
}

TEST_F(ElementwiseTest, IntegerDivTruncatesTowardZero) {
  Tensor a = ints({4}, {7, -7, 7, -7});
  Tensor b = ints({4}, {2, 2, -2, -2});
  Tensor y = run1(node("Div", 13, 2), {&a, &b});
  EXPECT_EQ(y.dtype, DType::Int64);
  expect_ints(y, {4}, {3, -3, -3, 3});
}

TEST_F(ElementwiseTest, IntegerDivOfSymbolIsUnsupported) {
  Tensor a = values({1}, {ctx.symbol("n")}, DType::Int64);
  Tensor b = ints({1}, {2});
  EXPECT_THROW_MSG(run1(node("Div", 13, 2), {&a, &b}), Unsupported, "Div", "/test/Div");
}

TEST_F(ElementwiseTest, DivisionByZeroIsAMathErrorNamingTheNode) {
  Tensor a = floats({1}, {1});
  Tensor b = floats({1}, {0});
  EXPECT_THROW_MSG(run1(node("Div", 13, 2), {&a, &b}), MathError, "/test/Div");
}

TEST_F(ElementwiseTest, UnaryOpsOnConstants) {
  Tensor x = floats({3}, {-2, 0, 4});
  expect_ints(run1(node("Neg", 13, 1), {&x}), {3}, {2, 0, -4});
  expect_ints(run1(node("Relu", 14, 1), {&x}), {3}, {0, 0, 4});
  Tensor p = floats({2}, {4, 9});
  expect_ints(run1(node("Sqrt", 13, 1), {&p}), {2}, {2, 3});
  expect_rationals(run1(node("Reciprocal", 13, 1), {&p}), {2}, {Rational(1, 4), Rational(1, 9)});
  Tensor z = floats({1}, {0});
  expect_ints(run1(node("Exp", 13, 1), {&z}), {1}, {1});
  Tensor one = floats({1}, {1});
  expect_ints(run1(node("Log", 13, 1), {&one}), {1}, {0});
}

TEST_F(ElementwiseTest, TranscendentalsMatchContextFunctions) {
  Tensor x = symbols("x", {2});
  const std::pair<const char*, Value (solver::Context::*)(Value)> fns[] = {
      {"Exp", &solver::Context::exp},         {"Log", &solver::Context::log},
      {"Tanh", &solver::Context::tanh},       {"Erf", &solver::Context::erf},
      {"Sigmoid", &solver::Context::sigmoid}, {"Sqrt", &solver::Context::sqrt},
      {"Relu", &solver::Context::relu},       {"Reciprocal", &solver::Context::recip}};
  for (auto [op, fn] : fns) {
    Tensor y = run1(node(op, 13, 1), {&x});
    SCOPED_TRACE(op);
    expect_same(y, values({2}, {(ctx.*fn)(x.data[0]), (ctx.*fn)(x.data[1])}));
  }
}

TEST_F(ElementwiseTest, SigmoidOfConstantNumerically) {
  Tensor x = floats({2}, {0, 1});
  expect_near(run1(node("Sigmoid", 13, 1), {&x}), {0.5L, 1.0L / (1.0L + expl(-1.0L))});
}

TEST_F(ElementwiseTest, PowWithConstantExponent) {
  Tensor x = floats({3}, {2, 3, 4});
  Tensor e = floats({1}, {2});
  expect_ints(run1(node("Pow", 15, 2), {&x, &e}), {3}, {4, 9, 16});
  Tensor sq = floats({2}, {4, 9});
  Tensor half = rationals({}, {Rational(1, 2)});
  expect_ints(run1(node("Pow", 15, 2), {&sq, &half}), {2}, {2, 3});
}

TEST_F(ElementwiseTest, PowOneHalfEqualsSqrt) {
  Tensor x = symbols("x", {2});
  Tensor half = rationals({}, {Rational(1, 2)});
  expect_same(run1(node("Pow", 15, 2), {&x, &half}), run1(node("Sqrt", 13, 1), {&x}));
}

TEST_F(ElementwiseTest, PowSymbolicBaseEqualsProduct) {
  Tensor x = symbols("x", {1});
  Tensor two = floats({}, {2});
  Tensor y = run1(node("Pow", 15, 2), {&x, &two});
  expect_same(y, values({1}, {ctx.mul(x.data[0], x.data[0])}));
}

TEST_F(ElementwiseTest, PowWithSymbolicExponentIsUnsupported) {
  Tensor x = floats({1}, {2});
  Tensor e = symbols("e", {1});
  EXPECT_THROW_MSG(run1(node("Pow", 15, 2), {&x, &e}), Unsupported, "exponent", "/test/Pow");
}

TEST_F(ElementwiseTest, SymbolicAddIsCommutative) {
  Tensor x = symbols("x", {2});
  Tensor y = symbols("y", {2});
  expect_same(run1(node("Add", 13, 2), {&x, &y}), run1(node("Add", 13, 2), {&y, &x}));
}

TEST_F(ElementwiseTest, ShapesThatDoNotBroadcastNameTheNodeAndShapes) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({2}, {1, 2});
  EXPECT_THROW_MSG(run1(node("Add", 13, 2), {&a, &b}), InputError, "/test/Add", "[2, 3]", "[2]");
}

TEST_F(ElementwiseTest, MixedDtypesAreAnInputError) {
  Tensor a = floats({1}, {1});
  Tensor b = ints({1}, {1});
  EXPECT_THROW_MSG(run1(node("Mul", 13, 2), {&a, &b}), InputError, "float", "int64");
}

TEST_F(ElementwiseTest, MissingInputIsAnInputError) {
  Tensor a = floats({1}, {1});
  EXPECT_THROW_MSG(run1(node("Add", 13, 1), {&a}), InputError, "/test/Add", "inputs");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
