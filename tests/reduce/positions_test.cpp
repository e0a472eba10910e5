// Positions along a dimension the instance shrinks are symbols there (solver/positions.cpp):
// a RoPE angle is proven as a function of the position, an op that reads positions in any
// other way than their order keeps them at full size, and data that holds positions only
// through the inputs (a router's scores after RoPE) shrinks whatever reads it.
#include <functional>

#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

constexpr int64_t kSeq = 128;  // more than the 64 elements shape arithmetic evaluates exactly

// p = float(Range(0, 128)); c = cos(p / 2) as a column; y = x * c, then `tail` on y or p.
struct RopeProgram {
  GraphBuilder b{"spec.onnx"};
  std::string p, c;
  RopeProgram() {
    b.input("x", {kSeq, 8});
    const std::string r = b.op("Range", {b.ints("start", {0}, true), b.ints("end", {kSeq}, true),
                                         b.ints("step", {1}, true)}, "positions");
    p = b.op("Cast", {r}, "p", {{"to", int_attr(int64_t(ir::DType::Float))}});
    const std::string angle = b.op("Mul", {p, b.constant("half", float_tensor({}, {0.5}))}, "angle");
    c = b.op("Unsqueeze", {b.op("Cos", {angle}, "cos"), b.ints("axes", {1})}, "c");
    b.op("Mul", {"x", c}, "y");
  }
};

TEST(Positions, ARangeOfAShrunkAxisMakesPositionsStandingForTheFullOnes) {
  RopeProgram g;
  g.b.output("y", {kSeq, 8});
  Outcome o = reduce_of(g.b.graph(), identity_plan(g.b.graph()));
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{2, 2}));
  const ir::Node* range = producer(o.reduced->spec, "positions");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->domain, "onnx_tv.reduce");
  ASSERT_TRUE(range->attribute("full"));
  EXPECT_EQ(range->attribute("full")->ints, (std::vector<int64_t>{0, 1}));

  auto run = run_alone(o.reduced->spec);
  solver::Context& ctx = run->ctx;
  const solver::Value p1 = run->at("p").data[1];
  EXPECT_FALSE(ctx.is_constant(p1)) << ctx.to_string(p1);  // not the number 1
  EXPECT_EQ(ctx.position_value(ctx.to_string(p1)), 1);
  // y[1, 0] = x[1, 0] cos(p_1 / 2): a function of the position, not cos(1/2).
  EXPECT_EQ(run->at("y").data[2], ctx.mul(run->sym("x", 2), ctx.cos(ctx.mul(p1, ctx.constant(solver::Rational(1, 2))))));
}

TEST(Positions, TopKOverDataHoldingPositionsShrinksTheTokens) {
  RopeProgram g;
  g.b.op_n("TopK", {"y", g.b.ints("k", {2})}, {"top", "which"}, {{"axis", int_attr(1)}});
  g.b.output("top", {kSeq, 2});
  Outcome o = reduce_of(g.b.graph(), identity_plan(g.b.graph()));
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{2, 8}));
}

// Each reads the raw positions otherwise than by their order: the axis keeps its full size.
TEST(Positions, RawPositionsReadOtherwiseThanByOrderKeepFullSize) {
  struct Case {
    const char* what;
    std::function<void(RopeProgram&)> add;
  };
  const Case cases[] = {
      {"against a fixed value",
       [](RopeProgram& g) {
         g.b.op("Less", {g.p, g.b.constant("edge", float_tensor({}, {100}))}, "early");
         g.b.output("early", {kSeq}, ir::DType::Bool);
       }},
      {"after an offset or a scale",
       [](RopeProgram& g) {
         const std::string shifted = g.b.op("Add", {g.p, g.b.constant("w", float_tensor({}, {4}))}, "shifted");
         g.b.op("Less", {g.p, shifted}, "inside");
         g.b.output("inside", {kSeq}, ir::DType::Bool);
       }},
      {"product, quotient or power",
       [](RopeProgram& g) {
         g.b.op("Mul", {g.p, g.p}, "square");
         g.b.output("square", {kSeq});
       }},
  };
  for (const Case& c : cases) {
    RopeProgram g;
    c.add(g);
    g.b.output("y", {kSeq, 8});
    Outcome o = reduce_of(g.b.graph(), identity_plan(g.b.graph()));
    ASSERT_TRUE(o.reduced) << c.what << ": " << o.why;
    EXPECT_EQ(declared_shape(o.reduced->spec, "x")[0], kSeq) << c.what;
    const ReducedDim* row = dim_row(*o.reduced, "x", 0);
    ASSERT_TRUE(row);
    ASSERT_FALSE(row->factors.empty());
    EXPECT_NE(row->factors[0].why.find(c.what), std::string::npos) << row->factors[0].why;
  }
}

}  // namespace
}  // namespace onnx_tv::reduce::test
