#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using MatMulTest = OpTest;

TEST_F(MatMulTest, TwoByThreeTimesThreeByTwo) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_ints(run1(node("MatMul", 13, 2), {&a, &b}), {2, 2}, {58, 64, 139, 154});
}

TEST_F(MatMulTest, OneDimensionalOperandsDropTheirDimension) {
  Tensor v = floats({3}, {1, 2, 3});
  Tensor m = floats({3, 2}, {1, 0, 0, 1, 1, 1});
  expect_ints(run1(node("MatMul", 13, 2), {&v, &m}), {2}, {4, 5});
  Tensor mt = floats({2, 3}, {1, 0, 1, 0, 1, 1});
  expect_ints(run1(node("MatMul", 13, 2), {&mt, &v}), {2}, {4, 5});
  expect_ints(run1(node("MatMul", 13, 2), {&v, &v}), {}, {14});
}

TEST_F(MatMulTest, BatchDimensionsBroadcast) {
  Tensor a = floats({2, 1, 2}, {1, 2, 3, 4});  // two batches of a 1x2 row
  Tensor b = floats({2, 1}, {10, 100});        // one matrix for both
  expect_ints(run1(node("MatMul", 13, 2), {&a, &b}), {2, 1, 1}, {210, 430});
  Tensor c = floats({3, 1, 2, 1}, {1, 1, 2, 2, 3, 3});
  Tensor y = run1(node("MatMul", 13, 2), {&a, &c});
  EXPECT_EQ(y.shape, (Shape{3, 2, 1, 1}));
  expect_ints(y, {3, 2, 1, 1}, {3, 7, 6, 14, 9, 21});
}

TEST_F(MatMulTest, SymbolicElementIsOneDot) {
  Tensor a = symbols("a", {1, 3});
  Tensor b = symbols("b", {3, 1});
  Tensor y = run1(node("MatMul", 13, 2), {&a, &b});
  expect_same(y, values({1, 1}, {ctx.dot(a.data, b.data)}));
  Value chain = ctx.add(ctx.add(ctx.mul(a.data[0], b.data[0]), ctx.mul(a.data[1], b.data[1])),
                        ctx.mul(a.data[2], b.data[2]));
  EXPECT_EQ(y.data[0], chain);  // canonical forms agree with any other association
}

TEST_F(MatMulTest, SliceOfProductEqualsProductOfSlices) {
  Tensor a = symbols("a", {4, 3});
  Tensor b = symbols("b", {3, 2});
  Tensor full = run1(node("MatMul", 13, 2), {&a, &b});
  // Rows 2..4 of A times B are rows 2..4 of A B.
  Tensor starts = ints({1}, {2}), ends = ints({1}, {4});
  Tensor a_part = run1(node("Slice", 13, 3), {&a, &starts, &ends});
  Tensor full_part = run1(node("Slice", 13, 3), {&full, &starts, &ends});
  expect_same(run1(node("MatMul", 13, 2), {&a_part, &b}), full_part);
  // A B = A[:, :2] B[:2] + A[:, 2:] B[2:] (the tensor-parallel row split).
  Tensor axes1 = ints({1}, {1}), axes0 = ints({1}, {0});
  Tensor s0 = ints({1}, {0}), e2 = ints({1}, {2}), s2 = ints({1}, {2}), e3 = ints({1}, {3});
  Tensor a0 = run1(node("Slice", 13, 4), {&a, &s0, &e2, &axes1});
  Tensor a1 = run1(node("Slice", 13, 4), {&a, &s2, &e3, &axes1});
  Tensor b0 = run1(node("Slice", 13, 4), {&b, &s0, &e2, &axes0});
  Tensor b1 = run1(node("Slice", 13, 4), {&b, &s2, &e3, &axes0});
  Tensor p0 = run1(node("MatMul", 13, 2), {&a0, &b0});
  Tensor p1 = run1(node("MatMul", 13, 2), {&a1, &b1});
  expect_same(run1(node("Add", 13, 2), {&p0, &p1}), full);
}

TEST_F(MatMulTest, InnerDimensionMismatchNamesShapesAndNode) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW_MSG(run1(node("MatMul", 13, 2), {&a, &b}), InputError, "/test/MatMul", "[2, 3]",
                   "[2, 2]");
}

TEST_F(MatMulTest, GemmWithTransposesAlphaBeta) {
  Tensor a = floats({3, 2}, {1, 4, 2, 5, 3, 6});  // A^T = [[1,2,3],[4,5,6]]
  Tensor b = floats({2, 3}, {7, 9, 11, 8, 10, 12});  // B^T = [[7,8],[9,10],[11,12]]
  Tensor c = floats({2}, {2, 4});
  auto n = node("Gemm", 13, 3, 1,
                {{"transA", int_attr(1)}, {"transB", int_attr(1)},
                 {"alpha", float_attr(2.0f)}, {"beta", float_attr(0.5f)}});
  // A'B' = [[58, 64], [139, 154]]
  expect_ints(run1(n, {&a, &b, &c}), {2, 2}, {117, 130, 279, 310});
}

TEST_F(MatMulTest, GemmAlphaMeansItsSimplestRational) {
  Tensor a = floats({1, 1}, {3});
  Tensor b = floats({1, 1}, {1});
  auto n = node("Gemm", 13, 2, 1, {{"alpha", float_attr(0.1f)}});
  expect_rationals(run1(n, {&a, &b, nullptr}), {1, 1}, {Rational(3, 10)});
}

TEST_F(MatMulTest, GemmRejectsNonMatrixC) {
  Tensor a = floats({2, 2}, {1, 2, 3, 4});
  Tensor c = floats({3}, {1, 2, 3});
  EXPECT_THROW_MSG(run1(node("Gemm", 13, 3), {&a, &a, &c}), InputError, "/test/Gemm", "C");
}

TEST_F(MatMulTest, EinsumBatchedMatMul) {
  Tensor a = floats({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = floats({2, 2, 1}, {5, 6, 7, 8});
  auto n = node("Einsum", 12, 2, 1, {{"equation", string_attr("bij,bjk->bik")}});
  expect_ints(run1(n, {&a, &b}), {2, 1, 1}, {17, 53});
}

TEST_F(MatMulTest, EinsumEqualsMatMulSymbolically) {
  Tensor a = symbols("a", {2, 2, 3});
  Tensor b = symbols("b", {2, 3, 2});
  auto n = node("Einsum", 12, 2, 1, {{"equation", string_attr("bij,bjk->bik")}});
  expect_same(run1(n, {&a, &b}), run1(node("MatMul", 13, 2), {&a, &b}));
}

TEST_F(MatMulTest, EinsumTransposeAndImplicitOutput) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto t = node("Einsum", 12, 1, 1, {{"equation", string_attr("ij->ji")}});
  expect_ints(run1(t, {&a}), {3, 2}, {1, 4, 2, 5, 3, 6});
  auto implicit = node("Einsum", 12, 1, 1, {{"equation", string_attr("ji")}});  // output "ij"
  expect_ints(run1(implicit, {&a}), {3, 2}, {1, 4, 2, 5, 3, 6});
  auto sum = node("Einsum", 12, 1, 1, {{"equation", string_attr("ij->")}});
  expect_ints(run1(sum, {&a}), {}, {21});
}

TEST_F(MatMulTest, EinsumEllipsisAndDiagonal) {
  Tensor a = floats({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto diag = node("Einsum", 12, 1, 1, {{"equation", string_attr("...ii->...i")}});
  expect_ints(run1(diag, {&a}), {2, 2}, {1, 4, 5, 8});
}

TEST_F(MatMulTest, EinsumOfThreeOperands) {
  Tensor a = floats({2}, {1, 2});
  Tensor b = floats({2, 2}, {1, 2, 3, 4});
  Tensor c = floats({2}, {5, 6});
  auto n = node("Einsum", 12, 3, 1, {{"equation", string_attr("i,ij,j->")}});
  // a^T B c = [1, 2] [[1, 2], [3, 4]] [5, 6] = [7, 10] . [5, 6]
  expect_ints(run1(n, {&a, &b, &c}), {}, {95});
}

TEST_F(MatMulTest, GemmScalarCBroadcasts) {
  Tensor a = floats({2, 1}, {1, 2});
  Tensor b = floats({1, 2}, {3, 4});
  Tensor c = floats({}, {10});
  expect_ints(run1(node("Gemm", 13, 3), {&a, &b, &c}), {2, 2}, {13, 14, 16, 18});
}

TEST_F(MatMulTest, EinsumSizeMismatchIsAnInputError) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto n = node("Einsum", 12, 2, 1, {{"equation", string_attr("ij,ij->i")}});
  Tensor b = floats({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW_MSG(run1(n, {&a, &b}), InputError, "/test/Einsum", "label 'j'");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
