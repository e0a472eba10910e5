#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using ShapeOpsTest = OpTest;

TEST_F(ShapeOpsTest, ReshapeWithMinusOneAndZero) {
  Tensor x = floats({2, 3, 4}, std::vector<long long>(24, 1));
  Tensor s = ints({2}, {0, -1});
  EXPECT_EQ(run1(node("Reshape", 14, 2), {&x, &s}).shape, (Shape{2, 12}));
  Tensor s2 = ints({3}, {-1, 0, 2});
  EXPECT_EQ(run1(node("Reshape", 14, 2), {&x, &s2}).shape, (Shape{4, 3, 2}));
}

// allowzero=1: a 0 in the target is a real 0 (an empty tensor may move its 0); with -1 it
// would make the -1 ambiguous, an input error rather than a division by zero.
TEST_F(ShapeOpsTest, ReshapeOfEmptyTensorWithAllowzero) {
  Tensor e = floats({4, 0}, {});
  Tensor t = ints({2}, {0, 4}), t_infer = ints({2}, {0, -1});
  EXPECT_EQ(run1(node("Reshape", 14, 2, 1, {{"allowzero", int_attr(1)}}), {&e, &t}).shape,
            (Shape{0, 4}));
  EXPECT_THROW_MSG(run1(node("Reshape", 14, 2, 1, {{"allowzero", int_attr(1)}}), {&e, &t_infer}),
                   InputError, "/test/Reshape", "-1");
  // Without allowzero the 0 copies the input's dimension: [4, 4], 16 elements, not 0.
  EXPECT_THROW_MSG(run1(node("Reshape", 14, 2), {&e, &t}), InputError, "/test/Reshape",
                   "element counts differ");
}

TEST_F(ShapeOpsTest, ReshapeKeepsRowMajorOrder) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor s = ints({2}, {3, 2});
  expect_ints(run1(node("Reshape", 14, 2), {&x, &s}), {3, 2}, {1, 2, 3, 4, 5, 6});
}

TEST_F(ShapeOpsTest, ReshapeAllowZeroMeansEmptyDimension) {
  Tensor x = floats({0, 3}, {});
  Tensor s = ints({2}, {3, 0});
  auto n = node("Reshape", 14, 2, 1, {{"allowzero", int_attr(1)}});
  EXPECT_EQ(run1(n, {&x, &s}).shape, (Shape{3, 0}));
}

TEST_F(ShapeOpsTest, ReshapeBadTargetNamesNodeAndShapes) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor s = ints({2}, {4, -1});
  EXPECT_THROW_MSG(run1(node("Reshape", 14, 2), {&x, &s}), InputError, "/test/Reshape", "[4, -1]",
                   "[2, 3]");
  Tensor s2 = ints({2}, {-1, -1});
  EXPECT_THROW_MSG(run1(node("Reshape", 14, 2), {&x, &s2}), InputError, "more than one -1");
}

TEST_F(ShapeOpsTest, FlattenAtAxis) {
  Tensor x = floats({2, 3, 4}, std::vector<long long>(24, 0));
  EXPECT_EQ(run1(node("Flatten", 13, 1), {&x}).shape, (Shape{2, 12}));
  EXPECT_EQ(run1(node("Flatten", 13, 1, 1, {{"axis", int_attr(0)}}), {&x}).shape, (Shape{1, 24}));
  EXPECT_EQ(run1(node("Flatten", 13, 1, 1, {{"axis", int_attr(-1)}}), {&x}).shape, (Shape{6, 4}));
}

TEST_F(ShapeOpsTest, SqueezeAndUnsqueeze) {
  Tensor x = floats({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run1(node("Squeeze", 13, 1), {&x}).shape, (Shape{3}));
  Tensor ax = ints({1}, {-1});
  EXPECT_EQ(run1(node("Squeeze", 13, 2), {&x, &ax}).shape, (Shape{1, 3}));
  EXPECT_EQ(run1(node("Squeeze", 11, 1, 1, {{"axes", ints_attr({0})}}), {&x}).shape,
            (Shape{3, 1}));
  Tensor bad = ints({1}, {1});
  EXPECT_THROW_MSG(run1(node("Squeeze", 13, 2), {&x, &bad}), InputError, "/test/Squeeze",
                   "not 1");
  Tensor v = floats({3}, {1, 2, 3});
  Tensor uax = ints({2}, {0, -1});
  expect_ints(run1(node("Unsqueeze", 13, 2), {&v, &uax}), {1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run1(node("Unsqueeze", 11, 1, 1, {{"axes", ints_attr({1})}}), {&v}).shape,
            (Shape{3, 1}));
}

TEST_F(ShapeOpsTest, UnsqueezeNeedsAxes) {
  Tensor v = floats({3}, {1, 2, 3});
  EXPECT_THROW_MSG(run1(node("Unsqueeze", 13, 1), {&v}), InputError, "/test/Unsqueeze", "inputs");
  EXPECT_THROW_MSG(run1(node("Unsqueeze", 11, 1), {&v}), InputError, "axes");
}

TEST_F(ShapeOpsTest, ConcatOfSplitIsTheWhole) {
  Tensor x = symbols("x", {2, 4});
  auto split = node("Split", 18, 1, 2, {{"axis", int_attr(1)}, {"num_outputs", int_attr(2)}});
  std::vector<Tensor> parts = run(split, {&x});
  auto concat = node("Concat", 13, 2, 1, {{"axis", int_attr(1)}});
  expect_same(run1(concat, {&parts[0], &parts[1]}), x);
}

TEST_F(ShapeOpsTest, ConcatAlongAxis) {
  Tensor a = floats({2, 1}, {1, 2});
  Tensor b = floats({2, 2}, {3, 4, 5, 6});
  auto n = node("Concat", 13, 2, 1, {{"axis", int_attr(-1)}});
  expect_ints(run1(n, {&a, &b}), {2, 3}, {1, 3, 4, 2, 5, 6});
  Tensor c = floats({3, 1}, {1, 2, 3});
  EXPECT_THROW_MSG(run1(n, {&a, &c}), InputError, "/test/Concat", "[3, 1]");
}

TEST_F(ShapeOpsTest, SplitWithSizesAndEvenly) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor sizes = ints({2}, {1, 2});
  auto n = node("Split", 13, 2, 2, {{"axis", int_attr(1)}});
  std::vector<Tensor> out = run(n, {&x, &sizes});
  ASSERT_EQ(out.size(), 2u);
  expect_ints(out[0], {2, 1}, {1, 4});
  expect_ints(out[1], {2, 2}, {2, 3, 5, 6});
  std::vector<Tensor> rows = run(node("Split", 13, 1, 2), {&x});
  expect_ints(rows[1], {1, 3}, {4, 5, 6});
  auto old = node("Split", 11, 1, 2, {{"axis", int_attr(1)}, {"split", ints_attr({2, 1})}});
  expect_ints(run(old, {&x})[1], {2, 1}, {3, 6});
}

TEST_F(ShapeOpsTest, SplitNumOutputsLastChunkSmaller) {
  Tensor x = floats({5}, {1, 2, 3, 4, 5});
  auto n = node("Split", 18, 1, 3, {{"num_outputs", int_attr(3)}});
  std::vector<Tensor> out = run(n, {&x});
  expect_ints(out[0], {2}, {1, 2});
  expect_ints(out[1], {2}, {3, 4});
  expect_ints(out[2], {1}, {5});
}

TEST_F(ShapeOpsTest, SplitSizesMustAddUp) {
  Tensor x = floats({3}, {1, 2, 3});
  Tensor sizes = ints({2}, {1, 1});
  EXPECT_THROW_MSG(run(node("Split", 13, 2, 2), {&x, &sizes}), InputError, "/test/Split",
                   "add up");
}

TEST_F(ShapeOpsTest, SliceWithNegativeStep) {
  Tensor x = floats({5}, {0, 1, 2, 3, 4});
  Tensor s = ints({1}, {-1}), e = ints({1}, {-6}), ax = ints({1}, {0}), st = ints({1}, {-2});
  expect_ints(run1(node("Slice", 13, 5), {&x, &s, &e, &ax, &st}), {3}, {4, 2, 0});
  Tensor s2 = ints({1}, {3}), e2 = ints({1}, {INT64_MIN}), st1 = ints({1}, {-1});
  expect_ints(run1(node("Slice", 13, 5), {&x, &s2, &e2, &ax, &st1}), {4}, {3, 2, 1, 0});
}

TEST_F(ShapeOpsTest, SliceClampsAndSelectsAxes) {
  Tensor x = floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor s = ints({1}, {1}), e = ints({1}, {INT64_MAX}), ax = ints({1}, {-1}), st = ints({1}, {2});
  expect_ints(run1(node("Slice", 13, 5), {&x, &s, &e, &ax, &st}), {2, 2}, {1, 3, 5, 7});
  Tensor s2 = ints({2}, {1, -3}), e2 = ints({2}, {2, -1});
  expect_ints(run1(node("Slice", 13, 3), {&x, &s2, &e2}), {1, 2}, {5, 6});
  Tensor zero = ints({1}, {0});
  EXPECT_THROW_MSG(run1(node("Slice", 13, 5), {&x, &s, &e, &ax, &zero}), InputError,
                   "/test/Slice", "step");
}

// Slice-1, as opset 9 models (IR versions 3 to 6) write it: attributes, no steps.
TEST_F(ShapeOpsTest, SliceOfOpset9TakesAttributes) {
  Tensor x = floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  ir::Node n = node("Slice", 9, 1);
  n.attributes["starts"] = ints_attr({1, -3});
  n.attributes["ends"] = ints_attr({2, 1000});
  expect_ints(run1(n, {&x}), {1, 3}, {5, 6, 7});
  n.attributes["starts"] = ints_attr({1});
  n.attributes["ends"] = ints_attr({3});
  n.attributes["axes"] = ints_attr({-1});
  expect_ints(run1(n, {&x}), {2, 2}, {1, 2, 5, 6});
}

TEST_F(ShapeOpsTest, SliceOfEmptyAxisIsEmpty) {
  Tensor x = floats({0, 2}, {});
  Tensor s = ints({1}, {-1}), e = ints({1}, {INT64_MIN}), ax = ints({1}, {0}), st = ints({1}, {-1});
  EXPECT_EQ(run1(node("Slice", 13, 5), {&x, &s, &e, &ax, &st}).shape, (Shape{0, 2}));
}

TEST_F(ShapeOpsTest, TransposeDefaultAndPerm) {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_ints(run1(node("Transpose", 13, 1), {&x}), {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor y = floats({1, 2, 2}, {1, 2, 3, 4});
  auto n = node("Transpose", 13, 1, 1, {{"perm", ints_attr({2, 0, 1})}});
  expect_ints(run1(n, {&y}), {2, 1, 2}, {1, 3, 2, 4});
  auto bad = node("Transpose", 13, 1, 1, {{"perm", ints_attr({0, 0, 1})}});
  EXPECT_THROW_MSG(run1(bad, {&y}), InputError, "/test/Transpose", "perm");
}

TEST_F(ShapeOpsTest, ExpandBroadcastsBothWays) {
  Tensor x = floats({3, 1}, {1, 2, 3});
  Tensor s = ints({2}, {1, 2});
  expect_ints(run1(node("Expand", 13, 2), {&x, &s}), {3, 2}, {1, 1, 2, 2, 3, 3});
  Tensor s3 = ints({3}, {2, 1, 1});
  EXPECT_EQ(run1(node("Expand", 13, 2), {&x, &s3}).shape, (Shape{2, 3, 1}));
  Tensor bad = ints({2}, {2, 2});
  EXPECT_THROW_MSG(run1(node("Expand", 13, 2), {&x, &bad}), InputError, "/test/Expand");
}

TEST_F(ShapeOpsTest, TileRepeats) {
  Tensor x = floats({1, 2}, {1, 2});
  Tensor r = ints({2}, {2, 2});
  expect_ints(run1(node("Tile", 13, 2), {&x, &r}), {2, 4}, {1, 2, 1, 2, 1, 2, 1, 2});
  Tensor bad = ints({1}, {2});
  EXPECT_THROW_MSG(run1(node("Tile", 13, 2), {&x, &bad}), InputError, "repeats");
}

TEST_F(ShapeOpsTest, SlicesOfSymbolsKeepTheirValues) {
  Tensor x = symbols("x", {4});
  Tensor s = ints({1}, {1}), e = ints({1}, {3});
  expect_same(run1(node("Slice", 13, 3), {&x, &s, &e}), values({2}, {x.data[1], x.data[2]}));
}

}  // namespace
}  // namespace onnx_tv::ops::testing
