// Reshape with allowzero=1 of an empty tensor: a zero dimension that moves (e[4, 0] to [0, 4])
// has no common factor with the others, and reduction keeps it whole instead of dividing by it.
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

TEST(EmptyReshape, ZeroDimensionMovedWithAllowzero) {
  GraphBuilder b("spec.onnx");
  b.input("x", {4, 4});
  b.input("e", {4, 0});
  b.op("Reshape", {"e", b.ints("target", {0, 4})}, "z", {{"allowzero", int_attr(1)}});
  b.op("Mul", {"x", "x"}, "y");
  b.output("y", {4, 4});
  b.output("z", {0, 4});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(declared_shape(o.reduced->spec, "z"), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

}  // namespace
}  // namespace onnx_tv::reduce::test
