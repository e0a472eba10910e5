// An axis whose count reduction would refuse is seen before anything is linked
// (reduce::refused_before_linking): a norm of a sum over tensor-parallel ranks has no bounded
// degree in their count. What it refuses, the whole instance's count degrees refuse too; what
// they accept, it accepts.
#include <gtest/gtest.h>

#include "reduce/mesh_axes.h"
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

constexpr int64_t kRanks = 4;

ir::Attribute axes_attr(std::vector<std::string> axes) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Strings;
  a.strings = std::move(axes);
  return a;
}

// Each of 4 tensor-parallel ranks sums its quarter of a and all-reduces the partial sums;
// `after` computes the output o from that sum s (in the spec, from the sum of all of a).
using After = std::function<void(GraphBuilder&)>;

ir::Graph spec_of(const After& after) {
  GraphBuilder s("spec.onnx");
  s.input("a", {4 * kRanks});
  s.op("ReduceSum", {"a"}, "s", {{"keepdims", int_attr(0)}});
  after(s);
  s.output("o", {});
  return s.graph();
}

ir::Plan plan_of(const After& after) {
  GraphBuilder b("program.onnx");
  b.input("a", {4});
  b.op("ReduceSum", {"a"}, "part", {{"keepdims", int_attr(0)}});
  b.comm("AllReduce", "part", "s", {{"group_axes", axes_attr({"tp"})}});
  after(b);
  b.output("o", {});
  ir::Plan plan;
  plan.programs.push_back(std::make_shared<const ir::Graph>(b.graph()));
  plan.mesh = ir::Mesh{{"tp"}, {kRanks}};
  plan.world_size = kRanks;
  plan.rank_program.assign(size_t(kRanks), 0);
  using P = ir::Placement;
  for (int64_t r = 0; r < kRanks; ++r)
    for (const auto& [value, place] : {std::pair<std::string, P>{"a", {P::Kind::Shard, 0}},
                                       {"o", {P::Kind::Replicate, 0}}}) {
      ir::Binding bd;
      bd.rank = r;
      bd.value = bd.spec = value;
      bd.placements = {place};
      bd.origin = "rank " + std::to_string(r) + " '" + value + "'";
      plan.bindings.push_back(bd);
    }
  return plan;
}

struct Seen {
  std::optional<KeepRanks> before;  // before linking
  std::optional<KeepRanks> whole;   // by the instance's reduction, linked
};

Seen seen(const After& after) {
  const ir::Plan full = plan_of(after);
  const FewerRanks first = choose_fewer_ranks(full, {});
  EXPECT_EQ(first.axes, std::vector<std::string>{"tp"});
  Seen out;
  out.before = refused_before_linking(first);
  out.whole = reduce_plan(spec_of(after), first, exec::link_plan(first.plan)).keep_ranks;
  return out;
}

TEST(RefusedBeforeLinking, ANormOfASumOverRanksIsRefusedBeforeAndAfter) {
  const Seen s = seen([](GraphBuilder& g) {
    g.op("Mul", {"s", "s"}, "sq");
    g.op("Sqrt", {"sq"}, "o");
  });
  ASSERT_TRUE(s.before);
  EXPECT_EQ(s.before->axis, "tp");
  EXPECT_NE(s.before->why.find("rank 0 'o' has degree unbounded"), std::string::npos) << s.before->why;
  // where the degree first passed 1: the square
  EXPECT_NE(s.before->why.find("Mul node"), std::string::npos) << s.before->why;
  ASSERT_TRUE(s.whole);
  EXPECT_EQ(s.whole->axis, "tp");
}

TEST(RefusedBeforeLinking, ASumOverRanksIsAccepted) {
  const Seen s = seen([](GraphBuilder& g) { g.op("Identity", {"s"}, "o"); });
  EXPECT_FALSE(s.before) << s.before->why;
  EXPECT_FALSE(s.whole) << s.whole->why;
}

// Pow(s, 1) has degree 1: the exponent is known only to inference, so before linking a Pow
// counts as if its exponent were 0, never more than inference finds.
TEST(RefusedBeforeLinking, APowerOfUnknownExponentCountsTheLeast) {
  const Seen s = seen([](GraphBuilder& g) {
    g.op("Pow", {"s", g.constant("one", float_tensor({}, {1.0}))}, "o");
  });
  EXPECT_FALSE(s.before) << s.before->why;
  EXPECT_FALSE(s.whole) << s.whole->why;
  const Seen square = seen([](GraphBuilder& g) {
    g.op("Pow", {"s", g.constant("two", float_tensor({}, {2.0}))}, "o");
  });
  EXPECT_FALSE(square.before) << square.before->why;
  ASSERT_TRUE(square.whole) << "a square of a sum over ranks has degree 2";
  EXPECT_EQ(square.whole->axis, "tp");
}

}  // namespace
}  // namespace onnx_tv::reduce::test
