// Sizes read as data keep their full-size value in the reduced instance: a size cast from
// Shape(x) to float, and the count a ReduceMean divides by. Otherwise a side that writes the
// count as a constant would disagree with one that reads it from a shape.
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// y = x / float(x.shape[-1]); m = x.mean(-1, keepdim=True).
ir::Graph size_program(const std::string& file) {
  GraphBuilder b(file);
  b.input("x", {3, 5, 8});
  b.op("Shape", {"x"}, "x_shape");
  b.op("Gather", {"x_shape", b.ints("last", {-1}, true)}, "d", {{"axis", int_attr(0)}});
  b.op("Cast", {"d"}, "d_float", {{"to", int_attr(int64_t(ir::DType::Float))}});
  b.op("Div", {"x", "d_float"}, "y");
  b.op("ReduceMean", {"x"}, "m", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(1)}});
  b.output("y", {3, 5, 8});
  b.output("m", {3, 5, 1});
  return b.graph();
}

TEST(SizeAsValue, SizeCastToFloatReadsTheFullSize) {
  const ir::Graph spec = size_program("spec.onnx");
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  EXPECT_EQ(declared_shape(r.spec, "x"), (std::vector<int64_t>{2, 2, 2}));

  // The Cast reads a frozen constant holding 8, not the reduced Gather(Shape(x)).
  const std::string frozen = operand_name(r.spec, "d_float", 0);
  EXPECT_TRUE(is_rewritten(frozen)) << frozen;
  EXPECT_EQ(operand_ints(r.spec, "d_float", 0), (std::vector<int64_t>{8}));
  auto run = run_alone(r.spec);
  solver::Context& ctx = run->ctx;
  for (int64_t i : {0, 7})
    EXPECT_EQ(run->at("y").data[size_t(i)], ctx.div(run->sym("x", i), ctx.constant(8)))
        << "y[" << i << "] = " << ctx.to_string(run->at("y").data[size_t(i)]);
}

TEST(SizeAsValue, ReduceMeanOverAReducedAxisDividesByTheFullCount) {
  const ir::Graph spec = size_program("spec.onnx");
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  const ir::Node* div = producer(r.spec, "m");
  ASSERT_TRUE(div);
  EXPECT_EQ(div->op_type, "Div");
  const ir::Node* sum = producer(r.spec, div->inputs.at(0));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->op_type, "ReduceSum");
  EXPECT_EQ(operand_ints(r.spec, "m", 1), (std::vector<int64_t>{8}));
  for (const auto& n : r.spec.nodes) EXPECT_NE(n.op_type, "ReduceMean");

  auto run = run_alone(r.spec);
  solver::Context& ctx = run->ctx;
  EXPECT_EQ(run->at("m").shape, (ir::Shape{2, 2, 1}));
  // m[0, 1, 0] = (x[0, 1, 0] + x[0, 1, 1]) / 8
  EXPECT_EQ(run->at("m").data[1],
            ctx.div(ctx.add(run->sym("x", 2), run->sym("x", 3)), ctx.constant(8)))
      << ctx.to_string(run->at("m").data[1]);
}

TEST(SizeAsValue, ReduceMeanOverAnUnreducedAxisStays) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 2});
  b.op("ReduceMean", {"x"}, "m", {{"axes", ints_attr({1})}, {"keepdims", int_attr(0)}});
  b.output("m", {3});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const ir::Node* n = producer(o.reduced->spec, "m");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op_type, "ReduceMean");
}

ir::Graph mean_spec() {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.op("ReduceMean", {"x"}, "m", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(1)}});
  b.output("m", {3, 5, 1});
  return b.graph();
}

// A mean over a tensor-parallel hidden axis: each rank sums its half, AllReduce, then one side
// multiplies by a written 1/8 (or, with `scale`, a wrong one).
ir::Graph mean_rank(const std::string& file, double scale) {
  GraphBuilder b(file);
  b.input("x", {3, 5, 4});
  b.op("ReduceSum", {"x", b.ints("axes", {-1})}, "part", {{"keepdims", int_attr(1)}});
  b.comm("AllReduce", "part", "total", {{"group", ints_attr({0, 1})}});
  b.op("Mul", {"total", b.constant("inv_count", float_tensor({}, {scale}))}, "m");
  b.output("m", {3, 5, 1});
  return b.graph();
}

ir::Plan mean_plan(double scale) {
  PlanBuilder p;
  const size_t prog = p.program(mean_rank("shard.onnx", scale));
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(prog);
    p.bind(r, "x", "x", std::vector{whole, whole, span(4 * r, 4 * r + 4)});
    p.bind(r, "m", "m");
  }
  return p.plan();
}

TEST(SizeAsValue, WrittenCountAgreesWithTheFrozenMean) {
  const ir::Graph spec = mean_spec();
  Outcome o = reduce_of(spec, mean_plan(0.125));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  const reduce::ReducedDim* d = dim_row(r, "x", 2);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reduced, 4);  // two ranks, two elements each
  // The frozen mean divides by 8 while each rank sums 2 of its 4 elements: 1/8 written on the
  // rank side agrees, so the reduced instance is equivalent, as the real plan is.
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

TEST(SizeAsValue, WrongScaleStaysVisible) {
  const ir::Graph spec = mean_spec();
  Outcome o = reduce_of(spec, mean_plan(0.25));  // averaging over one rank's share
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{"m"});
}

// Llama's RMSNorm in a half-precision export: the mean of squares is taken in float after a
// Cast. The frozen count must have the mean's type (float), not the type before the Cast.
// Cast's output has the type it names: the ReduceMean rewrite types its count after it, so the
// reduced spec's Div must read a float sum and a float count.
TEST(SizeAsValue, MeanAfterACastDividesByACountOfTheCastType) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8}, ir::DType::Float16);
  b.input("g", {8});
  b.op("Cast", {"x"}, "xf", {{"to", int_attr(int64_t(ir::DType::Float))}});
  b.op("Mul", {"xf", "xf"}, "sq");
  b.op("ReduceMean", {"sq"}, "ms", {{"axes", ints_attr({-1})}, {"keepdims", int_attr(1)}});
  b.op("Add", {"ms", b.constant("eps", float_tensor({}, {1.0 / 1024}))}, "ms_eps");
  b.op("Sqrt", {"ms_eps"}, "rms");
  b.op("Div", {"xf", "rms"}, "normed");
  b.op("Mul", {"normed", "g"}, "y");
  b.output("y", {3, 5, 8});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  EXPECT_EQ(declared_shape(r.spec, "x"), (std::vector<int64_t>{2, 2, 2}));
  const std::string count = operand_name(r.spec, "ms", 1);
  ASSERT_TRUE(r.spec.initializers.count(count)) << count;
  EXPECT_EQ(ir::dtype_name(r.spec.initializers.at(count).dtype), ir::dtype_name(ir::DType::Float));
  EXPECT_EQ(r.spec.initializers.at(count).reals, (std::vector<double>{8}));
  EXPECT_NO_THROW(run_alone(r.spec));
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

// LayerNormalization divides by the size of its normalised axes, which keep their full size;
// its scale and bias lie along those axes and must keep it too.
// LayerNormalization keeps X's normalised axes full size; Scale and Bias are tied to them, so
// a scale given as a graph input keeps [8] too and the reduced spec runs.
TEST(SizeAsValue, LayerNormalizationScaleKeepsTheNormalisedSize) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 5, 8});
  b.input("scale", {8});
  b.input("bias", {8});
  b.op("LayerNormalization", {"x", "scale", "bias"}, "y", {{"axis", int_attr(-1)}});
  b.output("y", {3, 5, 8});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  const reduce::ReducedDim* normalised = dim_row(r, "x", 2);
  ASSERT_TRUE(normalised);
  EXPECT_EQ(normalised->reduced, 8);
  EXPECT_EQ(declared_shape(r.spec, "scale"), (std::vector<int64_t>{8}));
  EXPECT_EQ(declared_shape(r.spec, "bias"), (std::vector<int64_t>{8}));
  EXPECT_EQ(declared_shape(r.plan.program_of(0), "scale"), (std::vector<int64_t>{8}));
  EXPECT_NO_THROW(run_alone(r.spec));
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

}  // namespace
}  // namespace onnx_tv::reduce::test
