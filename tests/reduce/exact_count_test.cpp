// Counts that reduction freezes are exact integers whatever float type reads them: a mean over
// 2^25 + 2 float32 elements divides by 33554434 (float32 rounds it to 33554432), and a mean or
// a size cast to float16 over 2049 elements divides by 2049 (float16 has no 2049).
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

constexpr int64_t kHalf = (int64_t(1) << 24) + 1;

// m = mean(x) over x of 2 * (2^24 + 1) elements; each of two ranks means its half, the
// AllReduce adds the two, and 1/2 scales the sum.
TEST(ExactCount, MeanOverMoreThan2To24ElementsIsReducedAndExact) {
  GraphBuilder s("spec.onnx");
  s.input("x", {2 * kHalf});
  s.op("ReduceMean", {"x"}, "m", {{"keepdims", int_attr(0)}});
  s.output("m", {});
  const ir::Graph spec = s.graph();

  GraphBuilder b("shard.onnx");
  b.input("x", {kHalf});
  b.op("ReduceMean", {"x"}, "part", {{"keepdims", int_attr(0)}});
  b.comm("AllReduce", "part", "total", {{"group", ints_attr({0, 1})}});
  b.op("Mul", {"total", b.constant("half", float_tensor({}, {0.5}))}, "m");
  b.output("m", {});
  PlanBuilder p;
  const size_t prog = p.program(b.graph());
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(prog);
    p.bind(r, "x", "x", std::vector{span(r * kHalf, (r + 1) * kHalf)});
    p.bind(r, "m", "m");
  }
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{4}));

  auto run = run_alone(o.reduced->spec);
  solver::Context& ctx = run->ctx;
  std::vector<solver::Value> xs;
  for (int64_t i = 0; i < 4; ++i) xs.push_back(run->sym("x", i));
  EXPECT_EQ(run->at("m").data[0], ctx.div(ctx.sum(xs), ctx.constant(2 * kHalf)))
      << ctx.to_string(run->at("m").data[0]);
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

// float16 x[2049]: its mean and x / float16(size) divide by exactly 2049.
TEST(ExactCount, Float16CountsAreTheIntegers) {
  GraphBuilder s("spec.onnx");
  const auto f16 = ir::DType::Float16;
  s.input("x", {2049}, f16);
  s.op("ReduceMean", {"x"}, "m", {{"keepdims", int_attr(0)}});
  s.op("Shape", {"x"}, "n");
  s.op("Cast", {"n"}, "n_half", {{"to", int_attr(int64_t(f16))}});
  s.op("Div", {"x", "n_half"}, "y");
  s.output("m", {}, f16);
  s.output("y", {2049}, f16);
  const ir::Graph spec = s.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;

  auto run = run_alone(o.reduced->spec);
  solver::Context& ctx = run->ctx;
  const ir::Tensor& x = run->at("x");
  EXPECT_EQ(run->at("m").data[0], ctx.div(ctx.sum(x.data), ctx.constant(2049)))
      << ctx.to_string(run->at("m").data[0]);
  EXPECT_EQ(run->at("y").data[0], ctx.div(x.data[0], ctx.constant(2049)))
      << ctx.to_string(run->at("y").data[0]);
}

}  // namespace
}  // namespace onnx_tv::reduce::test
