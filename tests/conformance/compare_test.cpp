// The comparison of computed and expected outputs: tolerance, worst element, NaN cases.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/compare.h"

namespace onnx_tv::eval {
namespace {

NumericTensor got(ir::DType t, ir::Shape s, std::vector<long double> v) {
  return {"y", t, std::move(s), v, std::vector<bool>(v.size(), true)};
}

ir::ConstTensor want_reals(ir::Shape s, std::vector<double> v) {
  return {ir::DType::Float, std::move(s), std::move(v), {}};
}

TEST(Compare, WithinFloat32ToleranceMatches) {
  auto c = compare(got(ir::DType::Float, {2}, {1.0005L, 0}), want_reals({2}, {1.0, 5e-6}));
  EXPECT_EQ(c.kind, Comparison::Kind::Match) << c.message;
}

TEST(Compare, MismatchNamesTheWorstElement) {
  auto c = compare(got(ir::DType::Float, {2, 2}, {1, 2, 3, 4.5L}),
                   want_reals({2, 2}, {1, 2.01, 3, 4}));
  ASSERT_EQ(c.kind, Comparison::Kind::Mismatch);
  EXPECT_NE(c.message.find("2 of 4 elements differ"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("worst at [1,1]: got 4.5, expected 4"), std::string::npos)
      << c.message;
}

TEST(Compare, IntegersAreExactAndTypesAndShapesMustAgree) {
  ir::ConstTensor ints{ir::DType::Int64, {2}, {}, {3, 4}};
  EXPECT_EQ(compare(got(ir::DType::Int64, {2}, {3, 4}), ints).kind, Comparison::Kind::Match);
  EXPECT_EQ(compare(got(ir::DType::Int64, {2}, {3, 5}), ints).kind, Comparison::Kind::Mismatch);
  auto t = compare(got(ir::DType::Int32, {2}, {3, 4}), ints);
  EXPECT_NE(t.message.find("type int32, expected int64"), std::string::npos) << t.message;
  auto s = compare(got(ir::DType::Int64, {1, 2}, {3, 4}), ints);
  EXPECT_NE(s.message.find("shape [1, 2], expected [2]"), std::string::npos) << s.message;
}

TEST(Compare, NanInTheReferenceIsOutOfScopeUnlessComputedToo) {
  const double nan = std::nan("");
  EXPECT_EQ(compare(got(ir::DType::Float, {1}, {2}), want_reals({1}, {nan})).kind,
            Comparison::Kind::NanExpected);
  EXPECT_EQ(compare(got(ir::DType::Float, {1}, {NAN}), want_reals({1}, {nan})).kind,
            Comparison::Kind::Match);
  EXPECT_EQ(compare(got(ir::DType::Float, {1}, {NAN}), want_reals({1}, {1})).kind,
            Comparison::Kind::Mismatch);
}

TEST(Compare, InfinitiesMustMatchExactly) {
  EXPECT_EQ(compare(got(ir::DType::Float, {1}, {-INFINITY}), want_reals({1}, {-INFINITY})).kind,
            Comparison::Kind::Match);
  EXPECT_EQ(compare(got(ir::DType::Float, {1}, {1e30L}), want_reals({1}, {INFINITY})).kind,
            Comparison::Kind::Mismatch);
}

TEST(Compare, Bfloat16StoredAsUint16BitsIsReadAsBfloat16) {
  ir::ConstTensor bits{ir::DType::UInt16, {2}, {}, {0x3f80, 0xc000}};  // 1.0, -2.0
  ir::ConstTensor b = as_bfloat16_if_bits(bits, ir::DType::BFloat16);
  EXPECT_EQ(b.dtype, ir::DType::BFloat16);
  EXPECT_EQ(b.reals, (std::vector<double>{1.0, -2.0}));
  EXPECT_EQ(as_bfloat16_if_bits(bits, ir::DType::UInt16).dtype, ir::DType::UInt16);
}

}  // namespace
}  // namespace onnx_tv::eval
