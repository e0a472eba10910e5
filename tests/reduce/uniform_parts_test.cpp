// A sum along a reduced dimension of data holding a part that does not vary along it counts
// the dimension (reduce/uniform_parts.cpp): that dimension keeps its full size. Sums of data
// whose every term varies (a norm's mean of squares, a product with a varying weight, a
// softmax) still shrink. (Terms that cancel, softmax(x - x), are confirmed on the instance's
// values by the check: tests/e2e/soundness_test.cpp, models/soundness/cancelled.)
#include <algorithm>

#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// The last axis of x[3, 5, 8] after reducing a program whose output is `out` of `out_shape`.
int64_t last_axis_of_x(const GraphBuilder& b) {
  const ir::Graph& spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  EXPECT_TRUE(o.reduced) << o.why;
  if (!o.reduced) return -1;
  return declared_shape(o.reduced->spec, "x").back();
}

bool says_counted(const GraphBuilder& b) {
  Outcome o = reduce_of(b.graph(), identity_plan(b.graph()));
  if (!o.reduced) return false;
  return std::any_of(o.reduced->kept_full.begin(), o.reduced->kept_full.end(), [](const auto& k) {
    return k.find("does not vary along it, which counts its size") != std::string::npos;
  });
}

TEST(UniformParts, ASumOfXPlusABroadcastKeepsItsAxis) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.input("c", {1});
  b.op("Add", {"x", "c"}, "xc");
  b.op("ReduceSum", {"xc", b.ints("axes", {-1})}, "s", {{"keepdims", int_attr(0)}});
  b.output("s", {3, 5});
  EXPECT_EQ(last_axis_of_x(b), 8);
  EXPECT_TRUE(says_counted(b));
}

TEST(UniformParts, AProductWithAVaryingWeightShrinks) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.input("w", {8});
  b.input("c", {1});
  b.op("Add", {"x", "c"}, "xc");
  b.op("Mul", {"xc", "w"}, "xw");  // (x + c) * w: every term holds a w along the axis
  b.op("ReduceSum", {"xw", b.ints("axes", {-1})}, "s", {{"keepdims", int_attr(0)}});
  b.output("s", {3, 5});
  EXPECT_EQ(last_axis_of_x(b), 2);
}

TEST(UniformParts, AVarianceAroundTheMeanKeepsItsAxis) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.op("ReduceMean", {"x"}, "m", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(1)}});
  b.op("Sub", {"x", "m"}, "d");
  b.op("Mul", {"d", "d"}, "d2");
  b.op("ReduceMean", {"d2"}, "v", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(0)}});
  b.output("v", {3, 5});
  EXPECT_EQ(last_axis_of_x(b), 8);
}

TEST(UniformParts, AnRmsNormShrinks) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.input("g", {8});
  b.op("Mul", {"x", "x"}, "x2");
  b.op("ReduceMean", {"x2"}, "ms", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(1)}});
  b.op("Add", {"ms", b.constant("eps", float_tensor({}, {0.5}))}, "mse");
  b.op("Sqrt", {"mse"}, "rms");
  b.op("Div", {"x", "rms"}, "n");
  b.op("Mul", {"n", "g"}, "y");
  b.op("ReduceSum", {"y", b.ints("axes", {-1})}, "s", {{"keepdims", int_attr(0)}});
  b.output("s", {3, 5});
  EXPECT_EQ(last_axis_of_x(b), 2);
  EXPECT_FALSE(says_counted(b));
}

TEST(UniformParts, ASoftmaxOfAVaryingRowShrinksAndOfABroadcastDoesNot) {
  GraphBuilder varying("spec.onnx");
  varying.input("x", {3, 5, 8});
  varying.input("c", {1});
  varying.op("Add", {"x", "c"}, "xc");
  varying.op("Softmax", {"xc"}, "p", {{"axis", int_attr(-1)}});
  varying.output("p", {3, 5, 8});
  EXPECT_EQ(last_axis_of_x(varying), 2);

  GraphBuilder broadcast("spec.onnx");
  broadcast.input("x", {3, 5, 8});
  broadcast.input("c", {3, 5, 1});
  broadcast.op("Mul", {"x", "c"}, "xc");  // x is in the program, and its last axis with it
  broadcast.op("Add", {"c", broadcast.constant("zeros", float_tensor({8}, std::vector<double>(8, 0.0)))},
               "cb");  // the same value along the axis
  broadcast.op("Softmax", {"cb"}, "p", {{"axis", int_attr(-1)}});  // 1/8 at every position
  broadcast.op("Add", {"xc", "p"}, "y");
  broadcast.output("y", {3, 5, 8});
  EXPECT_TRUE(says_counted(broadcast));
}

}  // namespace
}  // namespace onnx_tv::reduce::test
