#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using LogicTest = OpTest;

TEST_F(LogicTest, ComparisonsOfConstants) {
  Tensor a = floats({3}, {1, 2, 3});
  Tensor b = floats({1}, {2});
  Tensor eq = run1(node("Equal", 13, 2), {&a, &b});
  EXPECT_EQ(eq.dtype, DType::Bool);
  expect_ints(eq, {3}, {0, 1, 0});
  expect_ints(run1(node("Less", 13, 2), {&a, &b}), {3}, {1, 0, 0});
  expect_ints(run1(node("Greater", 13, 2), {&a, &b}), {3}, {0, 0, 1});
}

TEST_F(LogicTest, ComparisonsWithInfinitiesAndFunctionConstants) {
  Tensor a = values({2}, {solver::Context::neg_inf(), ctx.exp(q(1))});
  Tensor b = floats({2}, {0, 3});
  expect_ints(run1(node("Less", 13, 2), {&a, &b}), {2}, {1, 1});
}

TEST_F(LogicTest, ComparisonOnSymbolIsUnsupported) {
  Tensor a = symbols("x", {1});
  Tensor b = floats({1}, {0});
  EXPECT_THROW_MSG(run1(node("Greater", 13, 2), {&a, &b}), Unsupported, "symbolic value",
                   "/test/Greater");
  // Identical canonical forms are decided without the boolean layer.
  expect_ints(run1(node("Equal", 13, 2), {&a, &a}), {1}, {1});
}

TEST_F(LogicTest, WhereWithConstantCondition) {
  Tensor c = ints({2, 1}, {1, 0}, DType::Bool);
  Tensor x = symbols("x", {2});
  Tensor y = values({}, {solver::Context::neg_inf()});
  Tensor w = run1(node("Where", 16, 3), {&c, &x, &y});
  expect_same(w, values({2, 2}, {x.data[0], x.data[1], y.data[0], y.data[0]}));
}

// The values of a tensor's one element at each value of the integer input it depends on.
std::vector<solver::Rational> at_each(solver::Context& ctx, const Tensor& t) {
  const auto f = ctx.as_integer_function(t.data.at(0));
  EXPECT_TRUE(f.has_value());
  return f ? f->values : std::vector<solver::Rational>{};
}

std::vector<solver::Rational> points(std::initializer_list<int> xs) {
  std::vector<solver::Rational> out;
  for (int x : xs) out.emplace_back(x);
  return out;
}

TEST_F(LogicTest, ComparisonsAndWhereOnAnIntegerInput) {
  Tensor n = values({1}, {ctx.integer_input("n", 0, 4)}, DType::Int64);
  Tensor two = ints({}, {2});
  Tensor below = run1(node("Less", 13, 2), {&n, &two});
  EXPECT_EQ(at_each(ctx, below), points({1, 1, 0, 0}));
  Tensor x = floats({1}, {5}), y = floats({1}, {7});
  EXPECT_EQ(at_each(ctx, run1(node("Where", 16, 3), {&below, &x, &y})), points({5, 5, 7, 7}));
  Tensor is_two = run1(node("Equal", 13, 2), {&n, &two});
  Tensor either = run1(node("Or", 7, 2), {&below, &is_two});
  EXPECT_EQ(at_each(ctx, either), points({1, 1, 1, 0}));
  EXPECT_EQ(at_each(ctx, run1(node("Not", 1, 1), {&either})), points({0, 0, 0, 1}));
  EXPECT_EQ(run1(node("And", 7, 2), {&below, &is_two}).data[0], ctx.zero());  // never both
  EXPECT_EQ(at_each(ctx, run1(node("Xor", 7, 2), {&below, &either})), points({0, 0, 1, 0}));
}

TEST_F(LogicTest, ComparisonOfTwoIntegerInputsIsDecidedOnTheirDifferenceAsACount) {
  // n - m is a count over [-3, 3] (solver/counters.cpp); Less holds where it is negative.
  Tensor n = values({1}, {ctx.integer_input("n", 0, 4)}, DType::Int64);
  Tensor m = values({1}, {ctx.integer_input("m", 0, 4)}, DType::Int64);
  const auto f = ctx.as_integer_function(run1(node("Less", 13, 2), {&n, &m}).data[0]);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(ctx.counter(f->input), nullptr);
  EXPECT_EQ(f->lo, -3);
  EXPECT_EQ(f->values, (std::vector<solver::Rational>{1, 1, 1, 0, 0, 0, 0}));
  // A comparison with a real value is still not decided.
  Tensor x = values({1}, {ctx.symbol("x")});
  Tensor nf = values({1}, {ctx.integer_input("n", 0, 4)});
  EXPECT_THROW_MSG(run1(node("Less", 13, 2), {&nf, &x}), Unsupported, "symbolic value",
                   "/test/Less");
}

TEST_F(LogicTest, WhereOnASymbolicConditionBetweenInfinitiesIsUnsupported) {
  Tensor n = values({1}, {ctx.integer_input("n", 0, 2)}, DType::Bool);
  Tensor x = floats({1}, {1});
  Tensor inf = values({1}, {solver::Context::neg_inf()});
  EXPECT_THROW_MSG(run1(node("Where", 16, 3), {&n, &x, &inf}), Unsupported, "infinities",
                   "/test/Where");
}

TEST_F(LogicTest, TriluUpperAndLowerWithK) {
  Tensor x = floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_ints(run1(node("Trilu", 14, 1), {&x}), {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  Tensor k1 = ints({}, {1});
  expect_ints(run1(node("Trilu", 14, 2), {&x, &k1}), {3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  auto lower = node("Trilu", 14, 2, 1, {{"upper", int_attr(0)}});
  Tensor km1 = ints({}, {-1});
  expect_ints(run1(lower, {&x, &km1}), {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  expect_ints(run1(lower, {&x, nullptr}), {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9});
}

TEST_F(LogicTest, TriluOnBatchesAndBadRank) {
  Tensor x = floats({2, 1, 2}, {1, 2, 3, 4});
  auto lower = node("Trilu", 14, 1, 1, {{"upper", int_attr(0)}});
  expect_ints(run1(lower, {&x}), {2, 1, 2}, {1, 0, 3, 0});
  Tensor v = floats({2}, {1, 2});
  EXPECT_THROW_MSG(run1(lower, {&v}), InputError, "/test/Trilu", "rank");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
