#include <cmath>

#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using NnTest = OpTest;

TEST_F(NnTest, SoftmaxOfConstantsNumerically) {
  Tensor x = floats({1, 3}, {1, 2, 3});
  Tensor y = run1(node("Softmax", 13, 1), {&x});
  const long double s = expl(1) + expl(2) + expl(3);
  expect_near(y, {expl(1) / s, expl(2) / s, expl(3) / s});
  Tensor ly = run1(node("LogSoftmax", 13, 1), {&x});
  expect_near(ly, {1 - logl(s), 2 - logl(s), 3 - logl(s)});
}

TEST_F(NnTest, SoftmaxOfEqualEntriesIsExact) {
  Tensor x = floats({2, 2}, {5, 5, 0, 0});
  expect_rationals(run1(node("Softmax", 13, 1), {&x}), {2, 2},
                   {Rational(1, 2), Rational(1, 2), Rational(1, 2), Rational(1, 2)});
  // Opset 11 coerces to 2-D at axis: with axis 0 all four entries form one group.
  Tensor z = floats({2, 2}, {0, 0, 0, 0});
  expect_rationals(run1(node("Softmax", 11, 1, 1, {{"axis", int_attr(0)}}), {&z}), {2, 2},
                   {Rational(1, 4), Rational(1, 4), Rational(1, 4), Rational(1, 4)});
}

TEST_F(NnTest, MaskedSoftmaxEntryIsExactlyZero) {
  Tensor x = values({1, 2}, {ctx.symbol("s"), solver::Context::neg_inf()});
  expect_ints(run1(node("Softmax", 13, 1), {&x}), {1, 2}, {1, 0});
}

TEST_F(NnTest, SoftmaxAlongAxisZero) {
  Tensor x = floats({2, 2}, {1, 1, 1, 1});
  Tensor y = run1(node("Softmax", 13, 1, 1, {{"axis", int_attr(0)}}), {&x});
  expect_rationals(y, {2, 2}, {Rational(1, 2), Rational(1, 2), Rational(1, 2), Rational(1, 2)});
}

TEST_F(NnTest, SoftmaxOfSymbolsEqualsItsDecompositions) {
  Tensor x = symbols("x", {2, 3});
  Tensor y = run1(node("Softmax", 13, 1), {&x});
  Tensor axes = ints({1}, {-1});
  // The naive form: Exp, ReduceSum, Div.
  Tensor e = run1(node("Exp", 13, 1), {&x});
  Tensor s = run1(node("ReduceSum", 13, 2), {&e, &axes});
  expect_same(y, run1(node("Div", 13, 2), {&e, &s}));
  // The stable form with its own max: ReduceMax, Sub, Exp, ReduceSum, Div.
  Tensor m = run1(node("ReduceMax", 18, 2), {&x, &axes});
  Tensor d = run1(node("Sub", 13, 2), {&x, &m});
  Tensor e2 = run1(node("Exp", 13, 1), {&d});
  Tensor s2 = run1(node("ReduceSum", 13, 2), {&e2, &axes});
  expect_same(y, run1(node("Div", 13, 2), {&e2, &s2}));
}

TEST_F(NnTest, LogSoftmaxOfSymbolsEqualsXMinusLogSumExp) {
  Tensor x = symbols("x", {1, 3});
  Tensor y = run1(node("LogSoftmax", 13, 1), {&x});
  Tensor axes = ints({1}, {-1});
  Tensor e = run1(node("Exp", 13, 1), {&x});
  Tensor s = run1(node("ReduceSum", 13, 2), {&e, &axes});
  Tensor l = run1(node("Log", 13, 1), {&s});
  expect_same(y, run1(node("Sub", 13, 2), {&x, &l}));
}

TEST_F(NnTest, SoftmaxBadAxisNamesNode) {
  Tensor x = floats({2}, {1, 2});
  EXPECT_THROW_MSG(run1(node("Softmax", 13, 1, 1, {{"axis", int_attr(1)}}), {&x}), InputError,
                   "/test/Softmax", "axis");
}

TEST_F(NnTest, LayerNormOfConstants) {
  Tensor x = floats({1, 3}, {1, 2, 3});
  Tensor scale = floats({3}, {1, 1, 2});
  Tensor bias = floats({3}, {0, 0, 1});
  std::vector<Tensor> out = run(node("LayerNormalization", 17, 3, 3), {&x, &scale, &bias});
  ASSERT_EQ(out.size(), 3u);
  const long double inv = 1 / sqrtl(2.0L / 3 + 1e-5L);
  expect_near(out[0], {-inv, 0, 2 * inv + 1});
  expect_ints(out[1], {1, 1}, {2});
  expect_near(out[2], {inv});
  EXPECT_EQ(out[2].shape, (Shape{1, 1}));
}

TEST_F(NnTest, LayerNormEqualsItsDecomposition) {
  Tensor x = symbols("x", {2, 4});
  Tensor scale = symbols("g", {4});
  Tensor bias = symbols("b", {4});
  auto ln = node("LayerNormalization", 17, 3, 1, {{"epsilon", float_attr(1e-6f)}});
  Tensor y = run1(ln, {&x, &scale, &bias});
  // As torch exports it: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add.
  Tensor axes = ints({1}, {-1}), two = floats({}, {2});
  Tensor eps = run1(node("Constant", 13, 0, 1, {{"value_float", float_attr(1e-6f)}}), {});
  Tensor mean = run1(node("ReduceMean", 18, 2), {&x, &axes});
  Tensor d = run1(node("Sub", 13, 2), {&x, &mean});
  Tensor sq = run1(node("Pow", 15, 2), {&d, &two});
  Tensor var = run1(node("ReduceMean", 18, 2), {&sq, &axes});
  Tensor ve = run1(node("Add", 13, 2), {&var, &eps});
  Tensor sd = run1(node("Sqrt", 13, 1), {&ve});
  Tensor n = run1(node("Div", 13, 2), {&d, &sd});
  Tensor scaled = run1(node("Mul", 13, 2), {&n, &scale});
  expect_same(y, run1(node("Add", 13, 2), {&scaled, &bias}));
}

TEST_F(NnTest, LayerNormScaleShapeMismatch) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor scale = floats({2}, {1, 1});
  EXPECT_THROW_MSG(run(node("LayerNormalization", 17, 2), {&x, &scale}), InputError,
                   "/test/LayerNormalization", "Scale", "[2]");
}

TEST_F(NnTest, DropoutInInferenceIsIdentity) {
  Tensor x = symbols("x", {2});
  Tensor ratio = rationals({}, {Rational(1, 2)});
  Tensor no = ints({}, {0}, DType::Bool);
  std::vector<Tensor> out = run(node("Dropout", 13, 3, 2), {&x, &ratio, &no});
  expect_same(out[0], x);
  EXPECT_EQ(out[1].dtype, DType::Bool);
  expect_ints(out[1], {2}, {1, 1});
  Tensor yes = ints({}, {1}, DType::Bool);
  EXPECT_THROW_MSG(run(node("Dropout", 13, 3, 2), {&x, &ratio, &yes}), Unsupported,
                   "training mode", "/test/Dropout");
}

TEST_F(NnTest, DropoutInTrainingWithRatioZeroKeepsEverything) {
  Tensor x = symbols("x", {2});
  Tensor zero = rationals({}, {Rational(0)});
  Tensor yes = ints({}, {1}, DType::Bool);
  std::vector<Tensor> out = run(node("Dropout", 13, 3, 2), {&x, &zero, &yes});
  expect_same(out[0], x);
  expect_ints(out[1], {2}, {1, 1});
  // The default ratio (1/2) drops at random.
  EXPECT_THROW_MSG(run(node("Dropout", 13, 3, 2), {&x, nullptr, &yes}), Unsupported,
                   "training mode");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
