#include <cmath>

#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using ConstantOpsTest = OpTest;

TEST_F(ConstantOpsTest, GatherWithNegativeIndices) {
  Tensor x = floats({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor idx = ints({2}, {-1, 0});
  expect_ints(run1(node("Gather", 13, 2), {&x, &idx}), {2, 2}, {5, 6, 1, 2});
  Tensor idx2 = ints({2, 1}, {1, -2});
  auto n = node("Gather", 13, 2, 1, {{"axis", int_attr(1)}});
  expect_ints(run1(n, {&x, &idx2}), {3, 2, 1}, {2, 1, 4, 3, 6, 5});
  Tensor scalar = ints({}, {1});
  expect_ints(run1(node("Gather", 13, 2), {&x, &scalar}), {2}, {3, 4});
}

TEST_F(ConstantOpsTest, GatherOutOfRangeAndSymbolicIndices) {
  Tensor x = floats({3}, {1, 2, 3});
  Tensor idx = ints({1}, {3});
  EXPECT_THROW_MSG(run1(node("Gather", 13, 2), {&x, &idx}), InputError, "/test/Gather", "index 3");
  Tensor sym = values({1}, {ctx.symbol("tok")}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("Gather", 13, 2), {&x, &sym}), Unsupported, "indices", "tok");
}

TEST_F(ConstantOpsTest, GatherByAnIntegerInputPicksARowPerValue) {
  // W[4, 2] gathered by n in {0, 1, 2, 3}: each element is W[n, j] at every n.
  Tensor w = floats({4, 2}, {10, 11, 20, 21, 30, 31, 40, 41});
  Tensor n = values({1}, {ctx.integer_input("n", 0, 4)}, DType::Int64);
  Tensor out = run1(node("Gather", 13, 2), {&w, &n});
  ASSERT_EQ(out.shape, (Shape{1, 2}));
  for (size_t j = 0; j < 2; ++j) {
    const auto f = ctx.as_integer_function(out.data[j]);
    ASSERT_TRUE(f.has_value());
    for (int v = 0; v < 4; ++v) EXPECT_EQ(f->values[size_t(v)], solver::Rational(10 * (v + 1) + int(j)));
  }
  // n + 2 leaves the rows at n = 2: an input error naming the input's value.
  Tensor shifted = values({1}, {ctx.add(n.data[0], ctx.constant(2))}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("Gather", 13, 2), {&w, &shifted}), InputError, "index 4",
                   "where n = 2");
}

TEST_F(ConstantOpsTest, CastToBoolOfAnIntegerInput) {
  Tensor n = values({1}, {ctx.add(ctx.integer_input("n", 0, 3), ctx.constant(-1))}, DType::Int64);
  auto cast = node("Cast", 13, 1, 1, {{"to", int_attr(int64_t(DType::Bool))}});
  const auto f = ctx.as_integer_function(run1(cast, {&n}).data[0]);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values, (std::vector<solver::Rational>{1, 0, 1}));
}

TEST_F(ConstantOpsTest, IntegerCastsOfSymbolicValuesWrapOrAreUnsupported) {
  // A token id in [0, 300) cast to uint8 wraps past 255, as ONNX's casts do.
  Tensor n = values({1}, {ctx.integer_input("n", 0, 300)}, DType::Int64);
  auto to_u8 = node("Cast", 13, 1, 1, {{"to", int_attr(int64_t(DType::UInt8))}});
  const auto f = ctx.as_integer_function(run1(to_u8, {&n}).data[0]);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values[255], solver::Rational(255));
  EXPECT_EQ(f->values[256], solver::Rational(0));
  EXPECT_EQ(f->values[299], solver::Rational(43));
  // An unbounded integer: widening keeps it, narrowing is not modeled.
  Tensor s = values({1}, {ctx.symbol("s")}, DType::Int32);
  auto to_i64 = node("Cast", 13, 1, 1, {{"to", int_attr(int64_t(DType::Int64))}});
  EXPECT_EQ(run1(to_i64, {&s}).data[0], s.data[0]);
  auto to_i16 = node("Cast", 13, 1, 1, {{"to", int_attr(int64_t(DType::Int16))}});
  EXPECT_THROW_MSG(run1(to_i16, {&s}), Unsupported, "may wrap", "/test/Cast");
}

TEST_F(ConstantOpsTest, IntegerPowIsExactOrUnsupported) {
  // sqrt of an int64 is truncated by ONNX Runtime: exact where every value's root is rational.
  Tensor half = rationals({}, {solver::Rational(1, 2)});
  Tensor m = values({1}, {ctx.integer_input("m", 0, 2)}, DType::Int64);
  const auto f = ctx.as_integer_function(run1(node("Pow", 15, 2), {&m, &half}).data[0]);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values, (std::vector<solver::Rational>{0, 1}));
  Tensor n = values({1}, {ctx.integer_input("n", 0, 5)}, DType::Int64);
  EXPECT_THROW_MSG(run1(node("Pow", 15, 2), {&n, &half}), Unsupported, "irrational", "/test/Pow");
  // Natural powers stay integers.
  Tensor two = ints({}, {2});
  const auto sq = ctx.as_integer_function(run1(node("Pow", 15, 2), {&n, &two}).data[0]);
  ASSERT_TRUE(sq.has_value());
  EXPECT_EQ(sq->values[4], solver::Rational(16));
}

TEST_F(ConstantOpsTest, IntegerDivisionOfATokenIdByAConstant) {
  // The shard a token id falls in: ids / 4, value by value; by a symbolic divisor it is not
  // modeled.
  Tensor n = values({1}, {ctx.integer_input("n", 0, 10)}, DType::Int64);
  Tensor four = ints({}, {4});
  const auto f = ctx.as_integer_function(run1(node("Div", 14, 2), {&n, &four}).data[0]);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values, (std::vector<solver::Rational>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}));
  EXPECT_THROW_MSG(run1(node("Div", 14, 2), {&four, &n}), Unsupported, "integer Div", "/test/Div");
}

TEST_F(ConstantOpsTest, ShapeWithStartEnd) {
  Tensor x = floats({2, 3, 4}, std::vector<long long>(24, 0));
  Tensor s = run1(node("Shape", 15, 1), {&x});
  EXPECT_EQ(s.dtype, DType::Int64);
  expect_ints(s, {3}, {2, 3, 4});
  auto n = node("Shape", 15, 1, 1, {{"start", int_attr(-2)}, {"end", int_attr(10)}});
  expect_ints(run1(n, {&x}), {2}, {3, 4});
  auto empty = node("Shape", 15, 1, 1, {{"start", int_attr(2)}, {"end", int_attr(1)}});
  expect_ints(run1(empty, {&x}), {0}, {});
}

TEST_F(ConstantOpsTest, SizeIsTheElementCountAsInt64Scalar) {
  Tensor x = symbols("x", {2, 3});
  Tensor n = run1(node("Size", 13, 1), {&x});
  EXPECT_EQ(n.dtype, DType::Int64);
  expect_ints(n, {}, {6});
  Tensor empty = floats({0, 4}, {});
  expect_ints(run1(node("Size", 1, 1), {&empty}), {}, {0});
}

TEST_F(ConstantOpsTest, ConstantOfShapeDefaultsAndValue) {
  Tensor shape = ints({2}, {2, 1});
  Tensor zeros = run1(node("ConstantOfShape", 9, 1), {&shape});
  EXPECT_EQ(zeros.dtype, DType::Float);
  expect_ints(zeros, {2, 1}, {0, 0});
  ir::ConstTensor v{DType::Float, {1}, {0.1f}, {}};
  auto n = node("ConstantOfShape", 9, 1, 1, {{"value", tensor_attr(v)}});
  expect_rationals(run1(n, {&shape}), {2, 1}, {Rational(1, 10), Rational(1, 10)});
  ir::ConstTensor ninf{DType::Float, {1}, {-INFINITY}, {}};
  Tensor m = run1(node("ConstantOfShape", 9, 1, 1, {{"value", tensor_attr(ninf)}}), {&shape});
  EXPECT_EQ(m.data[0], solver::Context::neg_inf());
}

TEST_F(ConstantOpsTest, RangeOfIntegersAndFractions) {
  Tensor s = ints({}, {1}), l = ints({}, {8}), d = ints({}, {3});
  Tensor r = run1(node("Range", 11, 3), {&s, &l, &d});
  EXPECT_EQ(r.dtype, DType::Int64);
  expect_ints(r, {3}, {1, 4, 7});
  Tensor s2 = ints({}, {5}), l2 = ints({}, {1}), d2 = ints({}, {-2});
  expect_ints(run1(node("Range", 11, 3), {&s2, &l2, &d2}), {2}, {5, 3});
  Tensor fs = rationals({}, {0}), fl = rationals({}, {1}), fd = rationals({}, {Rational(1, 4)});
  expect_rationals(run1(node("Range", 11, 3), {&fs, &fl, &fd}), {4},
                   {0, Rational(1, 4), Rational(1, 2), Rational(3, 4)});
  Tensor empty_l = ints({}, {0});
  expect_ints(run1(node("Range", 11, 3), {&s, &empty_l, &d}), {0}, {});
  Tensor zero = ints({}, {0});
  EXPECT_THROW_MSG(run1(node("Range", 11, 3), {&s, &l, &zero}), InputError, "/test/Range", "delta");
}

TEST_F(ConstantOpsTest, IdentityAndConstant) {
  Tensor x = symbols("x", {2});
  expect_same(run1(node("Identity", 16, 1), {&x}), x);
  auto f = node("Constant", 13, 0, 1, {{"value_float", float_attr(0.33333334f)}});
  expect_rationals(run1(f, {}), {}, {Rational(1, 3)});
  auto fs = node("Constant", 13, 0, 1, {{"value_floats", floats_attr({0.5f, 0.1f})}});
  expect_rationals(run1(fs, {}), {2}, {Rational(1, 2), Rational(1, 10)});
  auto is = node("Constant", 13, 0, 1, {{"value_ints", ints_attr({3, -4})}});
  Tensor t = run1(is, {});
  EXPECT_EQ(t.dtype, DType::Int64);
  expect_ints(t, {2}, {3, -4});
  ir::ConstTensor v{DType::Int32, {2, 1}, {}, {7, 8}};
  Tensor c = run1(node("Constant", 13, 0, 1, {{"value", tensor_attr(v)}}), {});
  EXPECT_EQ(c.dtype, DType::Int32);
  expect_ints(c, {2, 1}, {7, 8});
}

TEST_F(ConstantOpsTest, ConstantNeedsExactlyOneValue) {
  EXPECT_THROW_MSG(run1(node("Constant", 13, 0), {}), InputError, "/test/Constant", "exactly one");
}

TEST_F(ConstantOpsTest, CastBetweenFloatsKeepsValues) {
  Tensor x = symbols("x", {2});
  Tensor y = run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Float16))}}), {&x});
  EXPECT_EQ(y.dtype, DType::Float16);
  expect_same(y, Tensor{DType::Float16, x.shape, x.data});
}

TEST_F(ConstantOpsTest, CastFloatToIntTruncatesConstants) {
  Tensor x = rationals({4}, {Rational(7, 2), Rational(-7, 2), 0, Rational(300)});
  Tensor y = run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Int64))}}), {&x});
  EXPECT_EQ(y.dtype, DType::Int64);
  expect_ints(y, {4}, {3, -3, 0, 300});
  Tensor y8 = run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Int8))}}), {&x});
  expect_ints(y8, {4}, {3, -3, 0, 44});  // 300 wraps as two's complement
  Tensor s = symbols("x", {1});
  EXPECT_THROW_MSG(run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Int32))}}), {&s}),
                   Unsupported, "/test/Cast", "symbolic");
}

TEST_F(ConstantOpsTest, CastToBoolIsNonzero) {
  Tensor x = rationals({3}, {Rational(1, 2), 0, -2});
  Tensor y = run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Bool))}}), {&x});
  EXPECT_EQ(y.dtype, DType::Bool);
  expect_ints(y, {3}, {1, 0, 1});
  Tensor b = ints({2}, {1, 0}, DType::Bool);
  Tensor f = run1(node("Cast", 13, 1, 1, {{"to", int_attr(int(DType::Float))}}), {&b});
  expect_ints(f, {2}, {1, 0});
}

TEST_F(ConstantOpsTest, CastMissingToIsAnInputError) {
  Tensor x = floats({1}, {1});
  EXPECT_THROW_MSG(run1(node("Cast", 13, 1), {&x}), InputError, "/test/Cast", "'to'");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
