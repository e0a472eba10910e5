// Fewer micro-batches (reduce/micro_batches.h): the bodies of a gradient-accumulation program
// are found from its dataflow, every body must be body 0 renamed, and the bodies' values may
// meet only in sums; cutting keeps the first bodies and sums their values.
#include <gtest/gtest.h>

#include <algorithm>

#include "reduce/micro_batches.h"
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// What to change in the program, to show each check refuses it.
struct Edit {
  int64_t scale_body = -1;      // this body scales by 2, the others by 1
  bool partial_sum_out = false;  // the first partial sum is also a graph output
  bool mixed = false;            // bodies 0 and 1 multiplied together
  bool declared = false;         // body 3 declares its product with another shape
  bool from_buffer = false;      // the chain starts from input buf: buf + s_0 + ...
  bool buffer_per_body = false;  // every body adds buf to its s_k before the chain
};

// One rank: body k reads x_mb<k> (rows 2k..2k+1 of x), s_k = ReduceSum(x_mb<k> * w * c_k),
// with its own Constant c_k; g = s_0 + s_1 + s_2 + s_3 as a chain of Adds.
frontend::Plan accumulating(const Edit& e = {}) {
  GraphBuilder b("rank0.onnx");
  b.input("w", {2});
  std::vector<std::string> s;
  for (int64_t k = 0; k < 4; ++k) {
    const std::string p = "mb" + std::to_string(k) + "_";
    b.input(p + "x", {2, 2});
    const std::string c =
        b.constant(p + "c", float_tensor({}, {e.scale_body == k ? 2.0 : 1.0}));
    b.op("Mul", {p + "x", "w"}, p + "y");
    b.op("Mul", {p + "y", c}, p + "z");
    b.op("ReduceSum", {p + "z", b.ints(p + "axes", {0})}, p + "s", {{"keepdims", int_attr(0)}});
    s.push_back(p + "s");
  }
  if (e.from_buffer || e.buffer_per_body) b.input("buf", {2});
  if (e.buffer_per_body)
    for (auto& v : s) v = b.op("Add", {v, "buf"}, v + "_buf");
  std::string acc = e.from_buffer ? b.op("Add", {"buf", s[0]}, "acc0") : s[0];
  for (size_t k = 1; k < s.size(); ++k)
    acc = b.op("Add", {acc, s[k]}, "acc" + std::to_string(k));
  if (e.mixed) b.op("Mul", {s[0], s[1]}, "mixed");
  b.output("acc3", {2});
  if (e.partial_sum_out) b.output("acc1", {2});
  if (e.mixed) b.output("mixed", {2});
  ir::Graph g = b.graph();
  for (int64_t k = 0; k < 4; ++k)
    g.value_info["mb" + std::to_string(k) + "_y"] = ir::ValueInfo{
        "mb" + std::to_string(k) + "_y", ir::DType::Float,
        std::vector<ir::Dim>{{e.declared && k == 3 ? 4 : 2, ""}, {2, ""}}};
  PlanBuilder pb;
  const int64_t r = pb.rank(pb.program(std::move(g)));
  pb.bind(r, "w", "w");
  pb.bind(r, "acc3", "g");
  frontend::Plan plan = pb.plan();
  for (int64_t k = 0; k < 4; ++k) {
    frontend::Binding bd;
    bd.rank = r;
    bd.value = "mb" + std::to_string(k) + "_x";
    bd.spec = "x";
    bd.local_slice = std::vector<frontend::SliceEntry>{span(2 * k, 2 * k + 2), whole};
    bd.origin = "binding of " + bd.value;
    plan.bindings.push_back(bd);
  }
  return plan;
}

MicroBatches find(const frontend::Plan& plan) {
  return find_micro_batches(plan, prove::link_plan(plan));
}

TEST(MicroBatches, BodiesOfAnAccumulatingProgram) {
  const MicroBatches mb = find(accumulating());
  ASSERT_EQ(mb.count, 4) << mb.why_not;
  ASSERT_TRUE(mb.programs[0]);
  const ProgramBodies& p = *mb.programs[0];
  // Each body: its Constant, two Muls, the axes Constant and the ReduceSum.
  for (const auto& body : p.bodies) EXPECT_EQ(body.size(), 5u);
  EXPECT_EQ(p.partial_sums.size(), 2u);  // acc1, acc2
  ASSERT_EQ(p.totals.size(), 1u);
  EXPECT_EQ(p.totals[0].leaves,
            (std::vector<std::string>{"mb0_s", "mb1_s", "mb2_s", "mb3_s"}));
  EXPECT_EQ(p.piece_of.at("mb3_x"), 3);
  EXPECT_EQ(mb.piece_dims.at({0, "mb2_x"}), 0u);
}

TEST(MicroBatches, CutKeepsTheFirstBodiesAndSumsThem) {
  const frontend::Plan plan = accumulating();
  const prove::LinkedPlan linked = prove::link_plan(plan);
  const MicroBatches mb = find_micro_batches(plan, linked);
  const auto cut = cut_micro_batches(plan, linked, mb, 2);
  ASSERT_TRUE(cut);
  const ir::Graph& g = *cut->plan.programs[0];
  EXPECT_EQ(g.nodes.size(), 2 * 5 + 1u);
  const ir::Node* total = producer(g, "acc3");
  ASSERT_TRUE(total);
  EXPECT_EQ(total->op_type, "Sum");
  EXPECT_EQ(total->inputs, (std::vector<std::string>{"mb0_s", "mb1_s"}));
  EXPECT_TRUE(is_input(g, "mb1_x"));
  EXPECT_FALSE(is_input(g, "mb2_x"));
  for (const auto& b : cut->plan.bindings) EXPECT_NE(b.value, "mb3_x");
  EXPECT_EQ(cut->plan.bindings.size(), 4u);  // w, acc3, mb0_x, mb1_x
  EXPECT_EQ(cut->totals[0], (std::vector<std::string>{"acc3"}));
}

// A body that differs in one constant is not the same kernel: no body may stand for it.
TEST(MicroBatches, ABodyDifferingInOneConstantIsNotCut) {
  const MicroBatches mb = find(accumulating({.scale_body = 3}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("of micro-batch 3 differs from"), std::string::npos) << mb.why_not;
  EXPECT_NE(mb.why_not.find("rank 0 (rank0.onnx)"), std::string::npos) << mb.why_not;
}

// Bodies left out are not run: what they declare must be what body 0 declares.
TEST(MicroBatches, ABodyDeclaringAnotherShapeIsNotCut) {
  const MicroBatches mb = find(accumulating({.declared = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("'/mb3_y/Mul' of micro-batch 3 differs"), std::string::npos)
      << mb.why_not;
}

// Accumulating into a buffer: buf + s_0 is body 0's node by its colour, but it starts the chain,
// so the buffer is added once, in the full program and in the cut one.
TEST(MicroBatches, AChainStartingFromABufferAddsItOnce) {
  const frontend::Plan plan = accumulating({.from_buffer = true});
  const prove::LinkedPlan linked = prove::link_plan(plan);
  const MicroBatches mb = find_micro_batches(plan, linked);
  ASSERT_EQ(mb.count, 4) << mb.why_not;
  const ProgramBodies& p = *mb.programs[0];
  for (const auto& body : p.bodies) EXPECT_EQ(body.size(), 5u);
  ASSERT_EQ(p.totals.size(), 1u);
  EXPECT_EQ(p.totals[0].shared, std::vector<std::string>{"buf"});
  const auto cut = cut_micro_batches(plan, linked, mb, 3);
  ASSERT_TRUE(cut);
  EXPECT_EQ(producer(*cut->plan.programs[0], "acc3")->inputs,
            (std::vector<std::string>{"mb0_s", "mb1_s", "mb2_s", "buf"}));
}

// When every body adds the buffer, each addition is its body's own: n of them at full size,
// as many as bodies kept in the cut.
TEST(MicroBatches, AValueEveryBodyAddsStaysInTheBodies) {
  const frontend::Plan plan = accumulating({.buffer_per_body = true});
  const prove::LinkedPlan linked = prove::link_plan(plan);
  const MicroBatches mb = find_micro_batches(plan, linked);
  ASSERT_EQ(mb.count, 4) << mb.why_not;
  const ProgramBodies& p = *mb.programs[0];
  for (const auto& body : p.bodies) EXPECT_EQ(body.size(), 6u);
  EXPECT_TRUE(p.totals[0].shared.empty());
  EXPECT_EQ(p.totals[0].leaves[3], "mb3_s_buf");
  const auto cut = cut_micro_batches(plan, linked, mb, 2);
  ASSERT_TRUE(cut);
  EXPECT_EQ(producer(*cut->plan.programs[0], "acc3")->inputs,
            (std::vector<std::string>{"mb0_s_buf", "mb1_s_buf"}));
}

TEST(MicroBatches, APartialSumUsedElsewhereIsNotCut) {
  const MicroBatches mb = find(accumulating({.partial_sum_out = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("Add node '/acc1/Add' adds some micro-batches and is used elsewhere"), std::string::npos) << mb.why_not;
}

TEST(MicroBatches, ValuesOfTwoBodiesMetOtherThanByASumAreNotCut) {
  const MicroBatches mb = find(accumulating({.mixed = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("other than by a sum"), std::string::npos) << mb.why_not;
}

// Three pieces are too few to gain anything from 2 and 3.
TEST(MicroBatches, ThreePiecesAreNotMicroBatches) {
  frontend::Plan plan = accumulating();
  std::erase_if(plan.bindings, [](const frontend::Binding& b) { return b.value == "mb3_x"; });
  EXPECT_EQ(find(plan).count, 0);
}

}  // namespace
}  // namespace onnx_tv::reduce::test
