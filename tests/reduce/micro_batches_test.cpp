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
  bool start_twice = false;      // the chain starts with Sum(buf, s_0, s_0)
  std::string body3_weight;      // body 3 reads this initializer instead of initializer w
  bool bind_v = false;           // initializer v is bound (to spec v)
  bool piece_bound_twice = false;  // mb3_x also bound whole to spec x2
  bool declared_input = false;   // mb3_x declared [3, 2]
  int partial_decls = 0;         // 1: acc1 declared [2]; 2: and acc2 declared [7]
  bool total_inside = false;     // acc3 is no graph output: g = Neg(acc3) is
  bool output_pieces = false;    // each body also outputs mb<k>_y and mb<k>_z, bound as pieces
  bool outputs_from_shared = false;  // ... computed from w and the body's constant only
  bool swap_outputs = false;     // ... with body 3's two bindings swapped
};

// One rank: body k reads x_mb<k> (rows 2k..2k+1 of x), s_k = ReduceSum(x_mb<k> * w * c_k),
// with its own Constant c_k; g = s_0 + s_1 + s_2 + s_3 as a chain of Adds.
ir::Plan accumulating(const Edit& e = {}) {
  GraphBuilder b("rank0.onnx");
  if (e.body3_weight.empty()) {
    b.input("w", {2});
  } else {
    for (const char* w : {"w", "v", "u"}) b.initializer(w, float_tensor({2}, {0, 0}));
  }
  std::vector<std::string> s;
  for (int64_t k = 0; k < 4; ++k) {
    const std::string p = "mb" + std::to_string(k) + "_";
    b.input(p + "x", {e.declared_input && k == 3 ? 3 : 2, 2});
    const std::string c =
        b.constant(p + "c", float_tensor({}, {e.scale_body == k ? 2.0 : 1.0}));
    const std::string w = k == 3 && !e.body3_weight.empty() ? e.body3_weight : "w";
    b.op("Mul", {p + "x", w}, p + "y");
    if (e.output_pieces) {
      const std::string from = e.outputs_from_shared ? w : p + "y";
      b.op("Mul", {from, c}, p + "out_y");
      b.op("Neg", {from}, p + "out_z");
      b.output(p + "out_y", {2, 2});
      b.output(p + "out_z", {2, 2});
    }
    b.op("Mul", {p + "y", c}, p + "z");
    b.op("ReduceSum", {p + "z", b.ints(p + "axes", {0})}, p + "s", {{"keepdims", int_attr(0)}});
    s.push_back(p + "s");
  }
  if (e.from_buffer || e.buffer_per_body || e.start_twice) b.input("buf", {2});
  if (e.buffer_per_body)
    for (auto& v : s) v = b.op("Add", {v, "buf"}, v + "_buf");
  std::string acc = e.start_twice   ? b.op("Sum", {"buf", s[0], s[0]}, "acc0")
                    : e.from_buffer ? b.op("Add", {"buf", s[0]}, "acc0")
                                    : s[0];
  for (size_t k = 1; k < s.size(); ++k)
    acc = b.op("Add", {acc, s[k]}, "acc" + std::to_string(k));
  if (e.mixed) b.op("Mul", {s[0], s[1]}, "mixed");
  const std::string total = e.total_inside ? b.op("Neg", {acc}, "g") : acc;
  b.output(total, {2});
  if (e.partial_sum_out) b.output("acc1", {2});
  if (e.mixed) b.output("mixed", {2});
  ir::Graph g = b.graph();
  for (int64_t k = 0; k < 4; ++k)
    g.value_info["mb" + std::to_string(k) + "_y"] = ir::ValueInfo{
        "mb" + std::to_string(k) + "_y", ir::DType::Float,
        std::vector<ir::Dim>{{e.declared && k == 3 ? 4 : 2, ""}, {2, ""}}};
  auto declare = [&](const std::string& v, int64_t n) {
    g.value_info[v] = ir::ValueInfo{v, ir::DType::Float, std::vector<ir::Dim>{{n, ""}}};
  };
  if (e.partial_decls >= 1) declare("acc1", 2);
  if (e.partial_decls >= 2) declare("acc2", 7);
  PlanBuilder pb;
  const int64_t r = pb.rank(pb.program(std::move(g)));
  pb.bind(r, "w", "w");
  if (e.bind_v) pb.bind(r, "v", "v");
  if (e.piece_bound_twice) pb.bind(r, "mb3_x", "x2");
  pb.bind(r, e.total_inside ? "g" : "acc3", "g");
  ir::Plan plan = pb.plan();
  auto piece = [&](const std::string& value, const std::string& spec, int64_t k) {
    ir::Binding bd;
    bd.rank = r;
    bd.value = value;
    bd.spec = spec;
    bd.local_slice = std::vector<ir::SliceEntry>{span(2 * k, 2 * k + 2), whole};
    bd.origin = "binding of " + bd.value;
    plan.bindings.push_back(bd);
  };
  for (int64_t k = 0; k < 4; ++k) {
    const std::string p = "mb" + std::to_string(k) + "_";
    piece(p + "x", "x", k);
    if (!e.output_pieces) continue;
    const bool swap = e.swap_outputs && k == 3;
    piece(p + "out_y", swap ? "z" : "y", k);
    piece(p + "out_z", swap ? "y" : "z", k);
  }
  return plan;
}

MicroBatches find(const ir::Plan& plan) {
  return find_micro_batches(plan, exec::link_plan(plan));
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
  const ir::Plan plan = accumulating();
  const exec::LinkedPlan linked = exec::link_plan(plan);
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
  const ir::Plan plan = accumulating({.from_buffer = true});
  const exec::LinkedPlan linked = exec::link_plan(plan);
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
  const ir::Plan plan = accumulating({.buffer_per_body = true});
  const exec::LinkedPlan linked = exec::link_plan(plan);
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

// Each of the following would let a plan wrong at full size be proven with fewer micro-batches.

// Sum(buf, s_0, s_0) adds body 0's value twice: it does not start the chain (a body's own
// node, so the bodies differ).
TEST(MicroBatches, AStartAddingTwoValuesOfItsBodyIsNotCut) {
  const MicroBatches mb = find(accumulating({.start_twice = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_FALSE(mb.why_not.empty());
}

// Bound initializers are inputs whatever they store: reading another one is another body; an
// unbound initializer equal in content to a bound one is not that one either.
TEST(MicroBatches, ABodyReadingAnotherBoundInitializerIsNotCut) {
  for (const Edit& e : {Edit{.body3_weight = "v", .bind_v = true}, Edit{.body3_weight = "u"}}) {
    const MicroBatches mb = find(accumulating(e));
    EXPECT_EQ(mb.count, 0) << e.body3_weight;
    EXPECT_NE(mb.why_not.find("of micro-batch 3 differs"), std::string::npos) << mb.why_not;
  }
  // Unbound initializers of equal content stand for each other (constants written per body).
  EXPECT_EQ(find(accumulating({.body3_weight = "u", .bind_v = true})).count, 0);
}

// Cutting a piece drops every binding of it: a piece may have no other.
TEST(MicroBatches, APieceBoundTwiceIsNotCut) {
  const MicroBatches mb = find(accumulating({.piece_bound_twice = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("'mb3_x' is bound to micro-batch 3 and to something else"),
            std::string::npos)
      << mb.why_not;
}

// The pieces left out are never bound: they must declare what piece 0 declares.
TEST(MicroBatches, APieceDeclaredOtherwiseIsNotCut) {
  const MicroBatches mb = find(accumulating({.declared_input = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("'mb3_x' is declared other than 'mb0_x'"), std::string::npos)
      << mb.why_not;
}

TEST(MicroBatches, OutputPiecesAreCutWithTheirBodies) {
  const ir::Plan plan = accumulating({.output_pieces = true});
  const exec::LinkedPlan linked = exec::link_plan(plan);
  const MicroBatches mb = find_micro_batches(plan, linked);
  ASSERT_EQ(mb.count, 4) << mb.why_not;
  const auto cut = cut_micro_batches(plan, linked, mb, 2);
  ASSERT_TRUE(cut);
  const ir::Graph& g = *cut->plan.programs[0];
  EXPECT_TRUE(std::any_of(g.outputs.begin(), g.outputs.end(),
                          [](const ir::ValueInfo& vi) { return vi.name == "mb1_out_z"; }));
  EXPECT_FALSE(std::any_of(g.outputs.begin(), g.outputs.end(),
                           [](const ir::ValueInfo& vi) { return vi.name == "mb2_out_y"; }));
}

// A bound output is its micro-batch's only if that micro-batch computes it.
TEST(MicroBatches, AnOutputPieceComputedFromSharedValuesIsNotCut) {
  const MicroBatches mb = find(accumulating({.output_pieces = true, .outputs_from_shared = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("depends on no micro-batch") == std::string::npos
                ? mb.why_not.find("computed from others")
                : 0,
            std::string::npos)
      << mb.why_not;
}

// Body 3 writes its two results to each other's spec values.
TEST(MicroBatches, SwappedOutputBindingsAreNotCut) {
  const MicroBatches mb = find(accumulating({.output_pieces = true, .swap_outputs = true}));
  EXPECT_EQ(mb.count, 0);
  EXPECT_NE(mb.why_not.find("of micro-batch 3 differs"), std::string::npos) << mb.why_not;
}

// The cut program does not compute the partial sums: the total takes what they declare, and
// partial sums that declare different shapes are not cut.
TEST(MicroBatches, PartialSumsDeclarationsGoToTheTotal) {
  const ir::Plan plan = accumulating({.partial_decls = 1, .total_inside = true});
  const exec::LinkedPlan linked = exec::link_plan(plan);
  const MicroBatches mb = find_micro_batches(plan, linked);
  ASSERT_EQ(mb.count, 4) << mb.why_not;
  EXPECT_EQ(mb.programs[0]->totals[0].declared_from, "acc1");
  const auto cut = cut_micro_batches(plan, linked, mb, 2);
  ASSERT_TRUE(cut);
  const auto& vi = cut->plan.programs[0]->value_info;
  ASSERT_TRUE(vi.count("acc3"));
  EXPECT_EQ(vi.at("acc3").shape->at(0).size, 2);
  // acc2 declares [7], acc1 [2] (and acc3, a graph output, [2] where it is one).
  for (bool inside : {true, false}) {
    const MicroBatches two = find(accumulating({.partial_decls = 2, .total_inside = inside}));
    EXPECT_EQ(two.count, 0);
    EXPECT_NE(two.why_not.find("declares its sum other than"), std::string::npos) << two.why_not;
  }
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
  ir::Plan plan = accumulating();
  std::erase_if(plan.bindings, [](const ir::Binding& b) { return b.value == "mb3_x"; });
  EXPECT_EQ(find(plan).count, 0);
}

}  // namespace
}  // namespace onnx_tv::reduce::test
