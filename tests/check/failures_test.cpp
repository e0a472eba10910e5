// failures(): one failure per failing obligation, its first refuted element in preference to
// an undecided one, so that a verdict rests on a witness wherever one exists.
#include <gtest/gtest.h>

#include "check/obligations.h"

namespace onnx_tv::check {
namespace {

using solver::Value;

struct Fixture {
  solver::Context ctx;
  exec::Env spec;
  std::vector<exec::Env> ranks{1};
  std::vector<ir::Binding> bindings;
  std::vector<Obligation> obs;

  // Spec value `name` and rank 0's `name`_r, three elements each.
  void bind(const std::string& name, std::vector<Value> want, std::vector<Value> got) {
    spec.values[name] = ir::make_tensor(ir::DType::Float, {3}, std::move(want));
    ranks[0].values[name + "_r"] = ir::make_tensor(ir::DType::Float, {3}, std::move(got));
    bindings.push_back({0, name + "_r", name});
  }
  void finish() {
    for (const auto& b : bindings) obs.push_back({b.spec, {{0}, {3}}, {&b}});
  }
};

TEST(Failures, ARefutedElementIsPreferredToAnEarlierUndecidedOne) {
  Fixture f;
  Value x = f.ctx.symbol("x"), y = f.ctx.symbol("y"), z = f.ctx.symbol("z");
  Value und = f.ctx.symbol("undecided"), ref = f.ctx.symbol("refuted");
  f.bind("a", {x, y, z}, {x, und, ref});   // undecided at 1, refuted at 2
  f.bind("b", {x, y, z}, {und, und, z});   // undecided only: its first element
  f.bind("c", {x, y, z}, {x, y, z});       // holds
  f.bind("d", {x, y, z}, {ref, ref, ref});  // refuted at 0: the rest is not compared
  f.finish();
  int calls = 0;
  auto compare = [&](Value, Value got, const std::string&) {
    ++calls;
    if (got == ref) return Comparison::Refuted;
    return got == und ? Comparison::Undecided : Comparison::Same;
  };
  int64_t compared = 0;
  bool by_cases = false;
  auto out = failures(f.ctx, f.obs, f.spec, f.ranks, compare, compared, by_cases);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].obligation, 0u);
  EXPECT_EQ(out[0].offset, 2);
  EXPECT_TRUE(out[0].refuted);
  EXPECT_EQ(out[1].obligation, 1u);
  EXPECT_EQ(out[1].offset, 0);
  EXPECT_FALSE(out[1].refuted);
  EXPECT_EQ(out[2].obligation, 3u);
  EXPECT_EQ(out[2].offset, 0);
  EXPECT_TRUE(out[2].refuted);
  EXPECT_EQ(compared, 3 + 3 + 3 + 1);
  EXPECT_EQ(calls, 2 + 2 + 1);  // equal forms are not handed to compare
}

}  // namespace
}  // namespace onnx_tv::check
