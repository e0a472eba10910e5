#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using ReduceTest = OpTest;

TEST_F(ReduceTest, ReduceSumAxesInputKeepdims) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axes = ints({1}, {1});
  expect_ints(run1(node("ReduceSum", 13, 2), {&x, &axes}), {2, 1}, {6, 15});
  auto no_keep = node("ReduceSum", 13, 2, 1, {{"keepdims", int_attr(0)}});
  Tensor neg = ints({1}, {-2});
  expect_ints(run1(no_keep, {&x, &neg}), {3}, {5, 7, 9});
}

TEST_F(ReduceTest, ReduceSumWithoutAxesReducesAllOrNothing) {
  Tensor x = floats({2, 2}, {1, 2, 3, 4});
  expect_ints(run1(node("ReduceSum", 13, 1), {&x}), {1, 1}, {10});
  auto noop = node("ReduceSum", 13, 1, 1, {{"noop_with_empty_axes", int_attr(1)}});
  expect_ints(run1(noop, {&x}), {2, 2}, {1, 2, 3, 4});
  Tensor empty = ints({0}, {});
  expect_ints(run1(noop, {&x, &empty}), {2, 2}, {1, 2, 3, 4});
}

TEST_F(ReduceTest, ReduceSumOpset11TakesAxesAttribute) {
  Tensor x = floats({2, 2}, {1, 2, 3, 4});
  auto n = node("ReduceSum", 11, 1, 1, {{"axes", ints_attr({0})}, {"keepdims", int_attr(0)}});
  expect_ints(run1(n, {&x}), {2}, {4, 6});
}

TEST_F(ReduceTest, ReduceMeanIsExact) {
  Tensor x = floats({2, 3}, {1, 2, 4, 4, 5, 6});
  auto n13 = node("ReduceMean", 13, 1, 1, {{"axes", ints_attr({-1})}, {"keepdims", int_attr(0)}});
  expect_rationals(run1(n13, {&x}), {2}, {Rational(7, 3), Rational(5)});
  Tensor axes = ints({1}, {1});
  auto n18 = node("ReduceMean", 18, 2, 1, {{"keepdims", int_attr(0)}});
  expect_rationals(run1(n18, {&x, &axes}), {2}, {Rational(7, 3), Rational(5)});
}

TEST_F(ReduceTest, ReduceMeanOfIntegersRoundsTowardZero) {
  Tensor x = ints({2, 3}, {1, 2, 4, -4, -5, -6});
  auto n = node("ReduceMean", 13, 1, 1, {{"axes", ints_attr({-1})}, {"keepdims", int_attr(0)}});
  expect_ints(run1(n, {&x}), {2}, {2, -5});
  Tensor b = ir::make_tensor(DType::Bool, {2}, {ctx.one(), ctx.zero()});
  EXPECT_THROW_MSG(run1(node("ReduceMean", 13, 1), {&b}), InputError, "bool", "ReduceMean-13");
}

TEST_F(ReduceTest, ReduceMeanOfSymbolsIsSumTimesReciprocal) {
  Tensor x = symbols("x", {3});
  Tensor y = run1(node("ReduceMean", 18, 1, 1, {{"keepdims", int_attr(0)}}), {&x});
  expect_same(y, values({}, {ctx.div(ctx.sum(x.data), q(3))}));
}

TEST_F(ReduceTest, ReduceMaxAndSumSquare) {
  Tensor x = floats({2, 2}, {1, -5, 3, 2});
  Tensor axes = ints({1}, {1});
  expect_ints(run1(node("ReduceMax", 18, 2), {&x, &axes}), {2, 1}, {1, 3});
  expect_ints(run1(node("ReduceMax", 13, 1, 1, {{"axes", ints_attr({0})}}), {&x}), {1, 2}, {3, 2});
  expect_ints(run1(node("ReduceSumSquare", 18, 2), {&x, &axes}), {2, 1}, {26, 13});
  expect_ints(run1(node("ReduceSumSquare", 13, 1), {&x}), {1, 1}, {39});
}

TEST_F(ReduceTest, ReduceMaxOverNothingIsMinusInfinity) {
  Tensor x = floats({2, 0}, {});
  Tensor axes = ints({1}, {1});
  Tensor y = run1(node("ReduceMax", 18, 2), {&x, &axes});
  EXPECT_EQ(y.shape, (Shape{2, 1}));
  EXPECT_EQ(y.data[0], solver::Context::neg_inf());
  EXPECT_THROW_MSG(run1(node("ReduceMean", 18, 2), {&x, &axes}), InputError, "empty");
}

TEST_F(ReduceTest, ReduceMaxOfSymbolsIsMaxAtom) {
  Tensor x = symbols("x", {2});
  Tensor y = run1(node("ReduceMax", 18, 1, 1, {{"keepdims", int_attr(0)}}), {&x});
  expect_same(y, values({}, {ctx.max(x.data)}));
}

TEST_F(ReduceTest, ShardedSumEqualsWholeSum) {
  Tensor x = symbols("x", {4});
  Tensor whole = run1(node("ReduceSum", 13, 1), {&x});
  Tensor lo = values({2}, {x.data[0], x.data[1]}), hi = values({2}, {x.data[2], x.data[3]});
  Tensor a = run1(node("ReduceSum", 13, 1), {&lo}), b = run1(node("ReduceSum", 13, 1), {&hi});
  expect_same(run1(node("Add", 13, 2), {&a, &b}), whole);
}

TEST_F(ReduceTest, AxisOutOfRangeAndDuplicatesAreInputErrors) {
  Tensor x = floats({2}, {1, 2});
  Tensor bad = ints({1}, {2});
  EXPECT_THROW_MSG(run1(node("ReduceSum", 13, 2), {&x, &bad}), InputError, "/test/ReduceSum",
                   "axes", "rank 1");
  Tensor dup = ints({2}, {0, -1});
  EXPECT_THROW_MSG(run1(node("ReduceSum", 13, 2), {&x, &dup}), InputError, "twice");
}

TEST_F(ReduceTest, SymbolicAxesAreUnsupported) {
  Tensor x = floats({2}, {1, 2});
  Tensor axes = values({1}, {ctx.symbol("a")}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("ReduceSum", 13, 2), {&x, &axes}), Unsupported, "axes");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
