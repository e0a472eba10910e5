// save_tensor_file rounds float16 values to nearest, ties to even, from the double itself.
#include "frontend/tensor_file.h"

#include <cmath>
#include <limits>

#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

TEST(TensorFile, Float16IsRoundedToNearestEven) {
  TempDir dir;
  const double inf = std::numeric_limits<double>::infinity();
  const double sub = std::ldexp(1.0, -24);  // the smallest subnormal
  const std::vector<std::pair<double, double>> cases = {
      {1.5, 1.5},
      {1.0 / 3, 0.333251953125},          // 0x3555
      {2049, 2048},                       // a tie: 2048 has the even mantissa
      {2051, 2052},                       // a tie the other way
      {65504, 65504},                     // the largest float16
      {65519, 65504},
      {65520, inf},                       // the tie past it rounds to infinity
      {1e300, inf},
      {-1e300, -inf},
      {sub, sub},
      {sub / 2, 0},                       // a tie between 0 and the smallest subnormal
      {sub * 1.5, sub * 2},               // a tie between two subnormals
      {1e-300, 0},
      {std::ldexp(1023.0, -24), std::ldexp(1023.0, -24)},  // the largest subnormal
      {std::ldexp(1023.75, -24), std::ldexp(1.0, -14)},    // rounds up into the normals
  };
  ir::ConstTensor t{ir::DType::Float16, {int64_t(cases.size())}, {}, {}};
  for (const auto& c : cases) t.reals.push_back(c.first);
  save_tensor_file(dir.file("h.pb"), "h", t);
  const NamedTensor back = load_tensor_file(dir.file("h.pb"));
  ASSERT_EQ(back.tensor.reals.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(back.tensor.reals[i], cases[i].second) << "float16(" << cases[i].first << ")";
  }
  // Negative zero keeps its sign; NaN stays NaN.
  ir::ConstTensor z{ir::DType::Float16, {2}, {-0.0, std::nan("")}, {}};
  save_tensor_file(dir.file("z.pb"), "z", z);
  const NamedTensor zb = load_tensor_file(dir.file("z.pb"));
  EXPECT_TRUE(std::signbit(zb.tensor.reals[0]));
  EXPECT_TRUE(std::isnan(zb.tensor.reals[1]));
}

}  // namespace
}  // namespace onnx_tv::frontend::test
