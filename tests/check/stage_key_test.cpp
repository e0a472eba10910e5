// The text of a stage obligation (check/stage_key.h): stages that differ only in names, node
// order indices, ranks and the symbols of their inputs give one text; a constant, a shape or a
// collective group that differs gives another, so such a stage is never reused.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "check/stage_key.h"
#include "check/stage_partition.h"
#include "ir/tensor_util.h"

namespace onnx_tv::check {
namespace {

ir::Tensor symbols(solver::Context& ctx, const std::string& prefix, int n) {
  std::vector<solver::Value> data;
  for (int i = 0; i < n; ++i) data.push_back(ctx.symbol(prefix + std::to_string(i)));
  return ir::make_tensor(ir::DType::Float, {n}, std::move(data));
}

ir::Tensor constants(solver::Context& ctx, std::vector<long long> values) {
  std::vector<solver::Value> data;
  for (long long v : values) data.push_back(ctx.constant(v));
  return ir::make_tensor(ir::DType::Float, {int64_t(values.size())}, std::move(data));
}

ir::Node mul(const std::string& a, const std::string& b, const std::string& out) {
  ir::Node n;
  n.op_type = "Mul";
  n.opset = 17;
  n.inputs = {a, b};
  n.outputs = {out};
  return n;
}

// Two spec "layers", x * c -> y and u * d -> v, each a stage of one node.
struct TwoLayers {
  solver::Context ctx;
  ir::Graph spec;
  ir::Plan plan;
  exec::LinkedPlan linked;
  exec::Env spec_env;
  std::vector<exec::Env> envs;
  std::map<std::pair<int64_t, std::string>, std::string> marks;
  std::vector<std::string> axes;
  std::map<std::pair<int64_t, std::string>, std::vector<const ir::Binding*>> bound;

  TwoLayers(std::vector<long long> c, std::vector<long long> d, int u_size = 2) {
    spec.nodes = {mul("x", "c", "y"), mul("u", "d", "v")};
    spec_env.values["x"] = symbols(ctx, "x", 2);
    spec_env.values["c"] = constants(ctx, c);
    spec_env.values["u"] = symbols(ctx, "u", u_size);
    spec_env.values["d"] = constants(ctx, d);
  }

  StageKey key(size_t node, const std::string& out) {
    StageUnits units;
    units.spec_nodes = {node};
    units.slots = {{-1, out, true}};
    return stage_key(ctx, StageKeyInputs{spec, plan, linked, spec_env, envs, marks, axes, bound}, units);
  }
};

TEST(StageKey, SameLayerUnderOtherNamesGivesOneText) {
  TwoLayers t({2, 3}, {2, 3});
  const StageKey a = t.key(0, "y"), b = t.key(1, "v");
  ASSERT_TRUE(a.reusable);
  EXPECT_EQ(a.text, b.text);
  ASSERT_EQ(a.atoms.size(), 2u);  // x0, x1 and u0, u1, in the same order
  EXPECT_EQ(t.ctx.to_string(t.ctx.product_of(std::vector<std::pair<solver::AtomId, solver::SmallRational>>{{b.atoms[1], 1}})), "u1");
}

TEST(StageKey, OneConstantDifferentGivesAnotherText) {
  TwoLayers t({2, 3}, {2, 4});
  EXPECT_NE(t.key(0, "y").text, t.key(1, "v").text);
}

TEST(StageKey, OneShapeDifferentGivesAnotherText) {
  TwoLayers t({2, 3}, {2, 3, 3}, 3);
  EXPECT_NE(t.key(0, "y").text, t.key(1, "v").text);
}

TEST(StageKey, InputsThatAreNotSymbolsAreNotReused) {
  TwoLayers t({2, 3}, {2, 3});
  t.spec_env.values["u"].data[0] = t.ctx.exp(t.ctx.symbol("u0"));
  EXPECT_FALSE(t.key(1, "v").reusable);
}

// All-reduces over a 2 x 2 mesh (pp, tp) whose tp axis is proven with fewer ranks.
struct Collectives {
  solver::Context ctx;
  ir::Graph spec;
  ir::Plan plan;
  exec::LinkedPlan linked;
  exec::Env spec_env;
  std::vector<exec::Env> envs{4};
  std::map<std::pair<int64_t, std::string>, std::string> marks;
  std::vector<std::string> axes{"tp"};
  std::map<std::pair<int64_t, std::string>, std::vector<const ir::Binding*>> bound;

  Collectives() {
    plan.world_size = 4;
    plan.mesh = ir::Mesh{{"pp", "tp"}, {2, 2}};
    plan.programs = {std::make_shared<ir::Graph>()};
    plan.rank_program = {0, 0, 0, 0};
    for (int r = 0; r < 4; ++r) envs[size_t(r)].values["x"] = symbols(ctx, "r" + std::to_string(r) + "x", 2);
  }

  StageKey all_reduce(std::vector<int64_t> group) {
    exec::Step step;
    step.kind = exec::Step::Kind::Collective;
    for (int64_t r : group) {
      ir::CommOp op;
      op.kind = ir::CommKind::AllReduce;
      op.group = group;
      op.data_input = "x";
      op.output = "y";
      step.members.push_back({r, 0, std::make_shared<const ir::CommOp>(op)});
    }
    linked.steps = {step};
    StageUnits units;
    units.steps = {0};
    for (int64_t r : group) units.slots.push_back({r, "y", true});
    return stage_key(ctx, StageKeyInputs{spec, plan, linked, spec_env, envs, marks, axes, bound}, units);
  }
};

TEST(StageKey, OneCollectiveGroupDifferentGivesAnotherText) {
  Collectives c;
  const std::string first_stage = c.all_reduce({0, 1}).text;
  EXPECT_EQ(first_stage, c.all_reduce({2, 3}).text);  // the same group in the next stage
  EXPECT_NE(first_stage, c.all_reduce({1, 0}).text);  // its members in another order
  EXPECT_NE(first_stage, c.all_reduce({0, 2}).text);  // a group across the other axis
}

}  // namespace
}  // namespace onnx_tv::check
