// Routing data counts where something sums it (reduce/sizes_as_data.cpp): a scatter without a
// reduction sums nothing, and an all-reduce of routing data keeps its ranks only where the count
// it makes is read as an integer.
#include <gtest/gtest.h>

#include "reduce/mesh_axes.h"
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

constexpr int64_t kExperts = 4;

// One program on dp ranks of a "dp" mesh, each value bound by its placement along dp.
ir::Plan dp_plan(const ir::Graph& program, int64_t dp,
                 const std::vector<std::pair<std::string, ir::Placement>>& values) {
  ir::Plan plan;
  plan.programs.push_back(std::make_shared<const ir::Graph>(program));
  plan.mesh = ir::Mesh{{"dp"}, {dp}};
  plan.world_size = dp;
  plan.rank_program.assign(size_t(dp), 0);
  for (int64_t r = 0; r < dp; ++r)
    for (const auto& [value, place] : values) {
      ir::Binding bind;
      bind.rank = r;
      bind.value = bind.spec = value;
      bind.placements = {place};
      bind.origin = "rank " + std::to_string(r) + " '" + value + "'";
      plan.bindings.push_back(bind);
    }
  return plan;
}

const ir::Placement kShard{ir::Placement::Kind::Shard, 0}, kReplicate{ir::Placement::Kind::Replicate, 0};

// A router over x[tokens, 4]: the one-hots of each token's top 2 experts, [tokens, 2, 4].
std::string one_hots(GraphBuilder& b, const std::string& x) {
  b.op_n("TopK", {x, b.ints("k", {2})}, {"top", "experts"}, {{"axis", int_attr(1)}});
  return b.op("OneHot", {"experts", b.ints("depth", {kExperts}, true),
                         b.constant("off_on", float_tensor({2}, {0, 1}))}, "one_hot",
              {{"axis", int_attr(-1)}});
}

// The experts' load over the tokens; with `read`, compared with a capacity of 3 (an integer
// read of the count).
void load_out(GraphBuilder& b, const std::string& load, bool read) {
  if (read) {
    b.op("Less", {load, b.constant("capacity", float_tensor({}, {3}))}, "fits");
    b.output("fits", {kExperts}, ir::DType::Bool);
  } else {
    b.output(load, {kExperts});
  }
}

ir::Graph load_spec(int64_t tokens, bool read) {
  GraphBuilder b("spec.onnx");
  b.input("x", {tokens, kExperts});
  b.op("ReduceSum", {one_hots(b, "x"), b.ints("axes", {0, 1})}, "load", {{"keepdims", int_attr(0)}});
  load_out(b, "load", read);
  return b.graph();
}

// dp ranks of 2 tokens each; each sums its own tokens' one-hots and all-reduces them.
ir::Plan load_plan(int64_t dp, bool read) {
  GraphBuilder b("rank.onnx");
  b.input("x", {2, kExperts});
  b.op("ReduceSum", {one_hots(b, "x"), b.ints("axes", {0, 1})}, "local", {{"keepdims", int_attr(0)}});
  ir::Attribute dp_axis;
  dp_axis.kind = ir::Attribute::Kind::Strings;
  dp_axis.strings = {"dp"};
  b.comm("AllReduce", "local", "load", {{"group_axes", dp_axis}});  // a sum over the dp ranks
  load_out(b, "load", read);
  return dp_plan(b.graph(), dp, {{"x", kShard}, {read ? "fits" : "load", kReplicate}});
}

Outcome reduce_with_two_of_four(bool read) {
  const ir::Plan full = load_plan(4, read);
  const FewerRanks fewer = with_counts(full, choose_fewer_ranks(full, {}), {{"dp", 2}});
  EXPECT_EQ(fewer.axes, (std::vector<std::string>{"dp"}));
  return reduce_plan(load_spec(8, read), fewer, exec::link_plan(fewer.plan));
}

TEST(RoutingCounts, AnAllReducedLoadPassedOutShrinksItsRanks) {
  const Outcome o = reduce_with_two_of_four(false);
  EXPECT_FALSE(o.keep_ranks) << o.keep_ranks->why;
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(o.reduced->plan.world_size, 2);
}

TEST(RoutingCounts, AnAllReducedLoadReadAsAnIntegerKeepsItsRanks) {
  const Outcome o = reduce_with_two_of_four(true);
  ASSERT_TRUE(o.keep_ranks);
  EXPECT_EQ(o.keep_ranks->axis, "dp");
  EXPECT_NE(o.keep_ranks->why.find("reads a count of routing data"), std::string::npos)
      << o.keep_ranks->why;
}

// The router's mask written with ScatterElements (no reduction: ones at the top 2 experts) and
// a TopK over the masked scores: nothing is summed along the tokens, which shrink.
TEST(RoutingCounts, AScatterWithoutReductionCountsNothing) {
  for (const char* reduction : {"none", "add"}) {
    GraphBuilder b("spec.onnx");
    b.input("x", {8, kExperts});
    b.op_n("TopK", {"x", b.ints("k", {2})}, {"top", "experts"}, {{"axis", int_attr(1)}});
    ir::Attribute r;
    r.kind = ir::Attribute::Kind::String;
    r.s = reduction;
    b.op("ScatterElements", {b.constant("zeros", float_tensor({8, kExperts}, std::vector<double>(32, 0))),
                             "experts", b.constant("ones", float_tensor({8, 2}, std::vector<double>(16, 1)))},
         "mask", {{"axis", int_attr(1)}, {"reduction", r}});
    b.op("Mul", {"x", "mask"}, "masked");
    b.op_n("TopK", {"masked", b.ints("k1", {1})}, {"best", "which"}, {{"axis", int_attr(1)}});
    b.output("best", {8, 1});
    Outcome o = reduce_of(b.graph(), identity_plan(b.graph()));
    ASSERT_TRUE(o.reduced) << o.why;
    // With a reduction, two top-k slots of one token may add up on one expert: the count of
    // what lands there is along the experts, which TopK reads whole anyway.
    EXPECT_EQ(declared_shape(o.reduced->spec, "x"), (std::vector<int64_t>{2, kExperts})) << reduction;
  }
}

// The masked scores of tokens[n]: ones at the top 2 experts written by ScatterElements without
// a reduction, then the best masked score per token.
void masked_best(GraphBuilder& b, int64_t tokens) {
  b.input("x", {tokens, kExperts});
  b.op_n("TopK", {"x", b.ints("k", {2})}, {"top", "experts"}, {{"axis", int_attr(1)}});
  b.op("ScatterElements",
       {b.constant("zeros", float_tensor({tokens, kExperts}, std::vector<double>(size_t(tokens * kExperts), 0))),
        "experts", b.constant("ones", float_tensor({tokens, 2}, std::vector<double>(size_t(tokens * 2), 1)))},
       "mask", {{"axis", int_attr(1)}});
  b.op("Mul", {"x", "mask"}, "masked");
  b.op_n("TopK", {"masked", b.ints("k1", {1})}, {"best", "which"}, {{"axis", int_attr(1)}});
  b.output("best", {tokens, 1});
}

// Each token's mask is its own (nothing lands from another token), so the best score has
// degree 0 in the count of dp ranks the tokens are sharded over: 2 of 4 ranks prove it.
TEST(RoutingCounts, AScatteredMaskIsOfDegreeZeroInTheRanks) {
  GraphBuilder spec("spec.onnx"), rank("rank.onnx");
  masked_best(spec, 8);
  masked_best(rank, 2);
  const ir::Plan full = dp_plan(rank.graph(), 4, {{"x", kShard}, {"best", kShard}});
  const FewerRanks fewer = with_counts(full, choose_fewer_ranks(full, {}), {{"dp", 2}});
  ASSERT_EQ(fewer.axes, (std::vector<std::string>{"dp"}));
  const Outcome o = reduce_plan(spec.graph(), fewer, exec::link_plan(fewer.plan));
  EXPECT_FALSE(o.keep_ranks) << o.keep_ranks->why;
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(o.reduced->plan.world_size, 2);
}

}  // namespace
}  // namespace onnx_tv::reduce::test
