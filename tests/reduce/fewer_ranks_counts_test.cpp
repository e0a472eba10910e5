// Fewer ranks in reduction (reduce/mesh_axes.h): the counts of shrunk mesh axes must stay one
// reducible dimension each, with the count of ranks the instance keeps.
#include <gtest/gtest.h>

#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// y = a + b in the spec; on a dp x tp mesh, a is sharded along dp and b along tp, so the
// spec's Add makes the two axes' counts one dimension.
ir::Plan two_axes_plan() {
  GraphBuilder prog("program.onnx");
  prog.input("a", {4});
  prog.input("b", {4});
  prog.op("Add", {"a", "b"}, "y");
  prog.output("y", {4});
  ir::Plan plan;
  plan.programs.push_back(std::make_shared<const ir::Graph>(prog.graph()));
  plan.mesh = ir::Mesh{{"dp", "tp"}, {4, 4}};
  plan.world_size = 16;
  plan.rank_program.assign(16, 0);
  using P = ir::Placement;
  const P shard{P::Kind::Shard, 0}, replicate{P::Kind::Replicate, 0};
  for (int64_t r = 0; r < 16; ++r)
    for (const auto& [value, places] :
         {std::pair<std::string, std::vector<P>>{"a", {shard, replicate}},
          {"b", {replicate, shard}},
          {"y", {shard, replicate}}}) {
      ir::Binding b;
      b.rank = r;
      b.value = value;
      b.spec = value;
      b.placements = places;
      b.origin = "rank " + std::to_string(r) + " '" + value + "'";
      plan.bindings.push_back(b);
    }
  return plan;
}

ir::Graph two_axes_spec() {
  GraphBuilder spec("spec.onnx");
  spec.input("a", {16});
  spec.input("b", {16});
  spec.op("Add", {"a", "b"}, "y");
  spec.output("y", {16});
  return spec.graph();
}

// The ranks of the full plan an instance keeps.
std::vector<int64_t> fewer_original(const std::map<std::string, int64_t>& counts) {
  const ir::Plan full = two_axes_plan();
  return with_counts(full, choose_fewer_ranks(full, {}), counts).original;
}

Outcome reduce_with(const std::map<std::string, int64_t>& counts) {
  const ir::Plan full = two_axes_plan();
  const FewerRanks fewer = with_counts(full, choose_fewer_ranks(full, {}), counts);
  EXPECT_EQ(fewer.axes, (std::vector<std::string>{"dp", "tp"}));
  return reduce_plan(two_axes_spec(), fewer, exec::link_plan(fewer.plan));
}

TEST(FewerRanksCounts, MergedCountsWithDifferentRanksKeptAreRefused) {
  const Outcome o = reduce_with({{"dp", 2}, {"tp", 3}});
  ASSERT_TRUE(o.keep_ranks);
  EXPECT_NE(o.keep_ranks->why.find("another axis"), std::string::npos) << o.keep_ranks->why;
}

TEST(FewerRanksCounts, MergedCountsWithEqualRanksKeptReduce) {
  const Outcome o = reduce_with({{"dp", 2}, {"tp", 2}});
  EXPECT_FALSE(o.keep_ranks);
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(o.reduced->plan.world_size, 4);
  EXPECT_EQ(fewer_original({{"dp", 2}, {"tp", 2}}), (std::vector<int64_t>{0, 1, 4, 5}));
}

}  // namespace
}  // namespace onnx_tv::reduce::test
