// A rank output that is a constant along a dimension reduction shrinks: it becomes a symbolic
// table in the instance but stays an output, checked against the spec's.
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

ir::Graph spec_program() {
  GraphBuilder b("spec.onnx");
  b.input("x", {4});
  b.constant("t", float_tensor({4}, {0, 1, 2, 3}));
  b.op("Mul", {"x", "t"}, "y");
  b.op("Identity", {"t"}, "ti");
  b.output("y", {4});
  b.output("t", {4});
  b.output("ti", {4});
  return b.graph();
}

// The rank outputs its table `k` directly (a Constant node or an initializer).
ir::Plan rank_plan(std::vector<double> table, bool initializer) {
  GraphBuilder b("rank0.onnx");
  b.input("x", {4});
  if (initializer) b.initializer("k", float_tensor({4}, table));
  else b.constant("k", float_tensor({4}, table));
  b.op("Mul", {"x", "k"}, "y");
  b.output("y", {4});
  b.output("k", {4});
  PlanBuilder p;
  const int64_t r = p.rank(p.program(b.graph()));
  p.bind(r, "x", "x");
  p.bind(r, "y", "y");
  p.bind(r, "k", "t");
  p.bind(r, "k", "ti");
  return p.plan();
}

TEST(ConstantOutput, TableOutputStaysAnOutput) {
  for (bool initializer : {false, true}) {
    SCOPED_TRACE(initializer ? "initializer" : "Constant node");
    const ir::Graph spec = spec_program();
    Outcome o = reduce_of(spec, rank_plan({0, 1, 2, 3}, initializer));
    ASSERT_TRUE(o.reduced) << o.why;
    EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{2}));
    EXPECT_FALSE(is_input(o.reduced->plan.program_of(0), "k"));
    EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
  }
}

TEST(ConstantOutput, WrongTableIsRefuted) {
  for (bool initializer : {false, true}) {
    SCOPED_TRACE(initializer ? "initializer" : "Constant node");
    const ir::Graph spec = spec_program();
    Outcome o = reduce_of(spec, rank_plan({3, 2, 1, 0}, initializer));
    ASSERT_TRUE(o.reduced) << o.why;
    EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan),
              (std::vector<std::string>{"t", "ti", "y"}));
  }
}

}  // namespace
}  // namespace onnx_tv::reduce::test
