// GatherElements, GatherND, ScatterElements, ScatterND and OneHot at indices that are functions
// of an integer input (a label, a token id), where each element is a sum over the input's
// values of its indicator times what that value picks. ONNX's backend tests cover the constant
// cases (tests/conformance).
#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using IndexOpsTest = OpTest;

// The values of `v` at each point of its integer input's range.
std::vector<Rational> at_each(solver::Context& ctx, Value v) {
  const auto f = ctx.as_integer_function(v);
  EXPECT_TRUE(f.has_value()) << ctx.to_string(v);
  return f ? f->values : std::vector<Rational>{};
}

TEST_F(IndexOpsTest, GatherElementsPicksTheLabelsLogit) {
  // logits[2, 3] gathered along the classes by labels[2, 1]: the cross-entropy's pick.
  Tensor logits = floats({2, 3}, {10, 11, 12, 20, 21, 22});
  Tensor labels = values({2, 1}, {ctx.integer_input("y0", 0, 3), ctx.integer_input("y1", 0, 3)},
                         DType::Int64);
  Tensor out = run1(node("GatherElements", 13, 2, 1, {{"axis", int_attr(1)}}), {&logits, &labels});
  ASSERT_EQ(out.shape, (Shape{2, 1}));
  EXPECT_EQ(at_each(ctx, out.data[0]), (std::vector<Rational>{10, 11, 12}));
  EXPECT_EQ(at_each(ctx, out.data[1]), (std::vector<Rational>{20, 21, 22}));
}

TEST_F(IndexOpsTest, GatherElementsOutOfRangeNamesTheInputValue) {
  Tensor x = floats({1, 2}, {1, 2});
  Tensor ind = values({1, 1}, {ctx.add(ctx.integer_input("y", 0, 3), ctx.constant(-1))}, DType::Int64);
  // y - 1 is -1 (the last class, counted from the end), 0 and 1; y = 0 is fine, none is out.
  Tensor out = run1(node("GatherElements", 13, 2, 1, {{"axis", int_attr(1)}}), {&x, &ind});
  EXPECT_EQ(at_each(ctx, out.data[0]), (std::vector<Rational>{2, 1, 2}));
  Tensor far = values({1, 1}, {ctx.add(ctx.integer_input("z", 0, 4), ctx.constant(0))}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("GatherElements", 13, 2, 1, {{"axis", int_attr(1)}}), {&x, &far}),
                   InputError, "index 2", "where z = 2", "/test/GatherElements");
}

TEST_F(IndexOpsTest, ScatterElementsAddSumsTheRowsOfEqualIds) {
  // The embedding gradient: rows of g[2, 1] added into a [3, 1] table at ids a, b.
  Tensor table = floats({3, 1}, {0, 0, 0});
  Tensor ids = values({2, 1}, {ctx.integer_input("a", 0, 3), ctx.integer_input("b", 0, 3)}, DType::Int64);
  Tensor g = symbols("g", {2, 1});
  Tensor out = run1(node("ScatterElements", 16, 3, 1, {{"reduction", string_attr("add")}}),
                    {&table, &ids, &g});
  // Row 1 is [a = 1] g0 + [b = 1] g1.
  const Value want = ctx.add(ctx.mul(ctx.indicator("a", 1), g.data[0]),
                             ctx.mul(ctx.indicator("b", 1), g.data[1]));
  EXPECT_EQ(out.data[1], want) << ctx.to_string(out.data[1]);
  // Row 0 is [a = 0] g0 + [b = 0] g1, with [a = 0] = 1 - [a = 1] - [a = 2].
  const Value want0 = ctx.add(ctx.mul(ctx.indicator("a", 0), g.data[0]),
                              ctx.mul(ctx.indicator("b", 0), g.data[1]));
  EXPECT_EQ(out.data[0], want0) << ctx.to_string(out.data[0]);
}

TEST_F(IndexOpsTest, ScatterElementsWithoutReductionReplacesOneElementPerRow) {
  // torch's nll_loss backward: -1 scattered into zeros[1, 3] at the label.
  Tensor zeros = floats({1, 3}, {0, 0, 0});
  Tensor label = values({1, 1}, {ctx.integer_input("y", 0, 3)}, DType::Int64);
  Tensor minus = floats({1, 1}, {-1});
  Tensor out = run1(node("ScatterElements", 13, 3, 1, {{"axis", int_attr(1)}}), {&zeros, &label, &minus});
  for (int64_t j = 0; j < 3; ++j)
    EXPECT_EQ(out.data[size_t(j)], ctx.neg(ctx.indicator("y", j))) << ctx.to_string(out.data[size_t(j)]);
  // Two updates that may land on one element leave it undefined (ONNX): not modeled.
  Tensor two = values({1, 2}, {ctx.integer_input("u", 0, 3), ctx.integer_input("w", 0, 3)}, DType::Int64);
  Tensor upd = floats({1, 2}, {1, 2});
  EXPECT_THROW_MSG(run1(node("ScatterElements", 13, 3, 1, {{"axis", int_attr(1)}}), {&zeros, &two, &upd}),
                   Unsupported, "two updates may land", "undefined");
}

TEST_F(IndexOpsTest, ScatterNDAddIsTorchsIndexPutWithAccumulate) {
  Tensor table = floats({3, 2}, {0, 0, 0, 0, 0, 0});
  Tensor ids = values({2, 1}, {ctx.integer_input("a", 0, 3), ctx.integer_input("b", 0, 3)}, DType::Int64);
  Tensor g = symbols("g", {2, 2});
  Tensor out = run1(node("ScatterND", 16, 3, 1, {{"reduction", string_attr("add")}}), {&table, &ids, &g});
  ASSERT_EQ(out.shape, (Shape{3, 2}));
  // Element [2, 1] is [a = 2] g1 + [b = 2] g3.
  const Value want = ctx.add(ctx.mul(ctx.indicator("a", 2), g.data[1]),
                             ctx.mul(ctx.indicator("b", 2), g.data[3]));
  EXPECT_EQ(out.data[5], want) << ctx.to_string(out.data[5]);
}

TEST_F(IndexOpsTest, GatherNDPicksRowsByTuplesOfOneInput) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  // The tuple (1, n) for n in [0, 3).
  Tensor ind = values({2}, {ctx.constant(1), ctx.integer_input("n", 0, 3)}, DType::Int64);
  Tensor out = run1(node("GatherND", 13, 2), {&x, &ind});
  ASSERT_EQ(out.shape, Shape{});
  EXPECT_EQ(at_each(ctx, out.data[0]), (std::vector<Rational>{4, 5, 6}));
  // Two inputs in one tuple are not one function of an input.
  Tensor two = values({2}, {ctx.integer_input("p", 0, 2), ctx.integer_input("n", 0, 3)}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("GatherND", 13, 2), {&x, &two}), Unsupported, "'p' and 'n'");
}

TEST_F(IndexOpsTest, OneHotOfALabelIsItsIndicators) {
  Tensor label = values({1}, {ctx.integer_input("y", 0, 3)}, DType::Int64);
  Tensor depth = ints({}, {3});
  Tensor off_on = floats({2}, {0, 1});
  Tensor out = run1(node("OneHot", 11, 3), {&label, &depth, &off_on});
  ASSERT_EQ(out.shape, (Shape{1, 3}));
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(out.data[size_t(j)], ctx.indicator("y", j));
  // A label shifted by -1: -1 is the last class, as ONNX counts negative indices.
  Tensor shifted = values({1}, {ctx.add(label.data[0], ctx.constant(-1))}, DType::Int64);
  Tensor s = run1(node("OneHot", 11, 3), {&shifted, &depth, &off_on});
  EXPECT_EQ(s.data[2], ctx.indicator("y", 0));
  EXPECT_EQ(s.data[0], ctx.indicator("y", 1));
}

TEST_F(IndexOpsTest, TopKOfASymbolicRowPicksByItsSlotsIndicators) {
  Tensor x = symbols("x", {1, 3});
  Tensor k = ints({1}, {2});
  std::vector<Tensor> out = run(node("TopK", 11, 2, 2), {&x, &k});
  ASSERT_EQ(out[0].shape, (Shape{1, 2}));
  ASSERT_EQ(out[1].dtype, DType::Int64);
  // Slot 1's value is x0 + [s = 1](x1 - x0) + [s = 2](x2 - x0) for its selection s.
  const auto f = ctx.as_integer_function(out[1].data[1]);
  ASSERT_TRUE(f.has_value());
  const Value want = ctx.from_integer_function(f->input, 0, x.data);
  EXPECT_EQ(out[0].data[1], want) << ctx.to_string(out[0].data[1]);
  // The same row through ArgMax is TopK's slot 0 (a slot's element does not depend on k): the
  // same selection, so the two meet without SAT.
  Tensor am = run1(node("ArgMax", 13, 1, 1, {{"axis", int_attr(1)}}), {&x});
  EXPECT_EQ(am.shape, (Shape{1, 1}));
  EXPECT_EQ(am.data[0], out[1].data[0]);
  EXPECT_NE(am.data[0], out[1].data[1]);
  // Ties go to the lower index, or the last with select_last_index.
  Tensor c = floats({1, 4}, {1, 5, 5, 0});
  EXPECT_EQ(run1(node("ArgMax", 13, 1, 1, {{"axis", int_attr(1)}}), {&c}).data[0], q(1));
  EXPECT_EQ(run1(node("ArgMax", 13, 1, 1, {{"axis", int_attr(1)}, {"select_last_index", int_attr(1)}}),
                 {&c}).data[0], q(2));
}

TEST_F(IndexOpsTest, UnsortedTopKHasSlotsOfItsOwnPerEvaluation) {
  // sorted=0: the runtime orders the results, so slot 0 is not the sorted slot 0 and two
  // evaluations (two nodes, or the spec's and a rank's) share nothing; even a row of constants
  // gives integer inputs, not the sorted constants.
  Tensor x = symbols("x", {1, 3});
  Tensor k = ints({1}, {2});
  const auto unsorted = node("TopK", 11, 2, 2, {{"sorted", int_attr(0)}});
  std::vector<Tensor> sorted = run(node("TopK", 11, 2, 2), {&x, &k});
  std::vector<Tensor> a = run(unsorted, {&x, &k}), b = run(unsorted, {&x, &k});
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_NE(a[1].data[j], sorted[1].data[j]);
    EXPECT_NE(a[1].data[j], b[1].data[j]);
    EXPECT_TRUE(ctx.as_integer_function(a[1].data[j]).has_value());
  }
  Tensor c = floats({1, 3}, {1, 5, 3});
  std::vector<Tensor> u = run(unsorted, {&c, &k});
  EXPECT_FALSE(ctx.is_constant(u[1].data[0]));
}

TEST_F(IndexOpsTest, ScatteringTopKWeightsAtTheirSlotsNeedsNoReduction) {
  // torch's zeros.scatter(1, idx, w) for TopK's idx: distinct slots never meet, so each gate
  // is the sum over slots of [s_j = e] w_j, as a OneHot of idx times w gives it.
  Tensor x = symbols("x", {1, 3});
  Tensor k = ints({1}, {2});
  std::vector<Tensor> top = run(node("TopK", 11, 2, 2), {&x, &k});
  Tensor zeros = floats({1, 3}, {0, 0, 0});
  Tensor w = symbols("w", {1, 2});
  Tensor gates = run1(node("ScatterElements", 13, 3, 1, {{"axis", int_attr(1)}}), {&zeros, &top[1], &w});
  for (int64_t e = 0; e < 3; ++e) {
    std::vector<Value> parts;
    for (size_t j = 0; j < 2; ++j) {
      const auto f = ctx.as_integer_function(top[1].data[j]);
      ASSERT_TRUE(f.has_value());
      parts.push_back(ctx.mul(ctx.indicator(f->input, e), w.data[j]));
    }
    EXPECT_EQ(gates.data[size_t(e)], ctx.sum(parts)) << ctx.to_string(gates.data[size_t(e)]);
  }
  // Slots of two different rows may meet: still undefined.
  Tensor y = symbols("y", {1, 3});
  std::vector<Tensor> other = run(node("TopK", 11, 2, 2), {&y, &k});
  Tensor mixed = values({1, 2}, {top[1].data[0], other[1].data[0]}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("ScatterElements", 13, 3, 1, {{"axis", int_attr(1)}}), {&zeros, &mixed, &w}),
                   Unsupported, "two updates may land");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
