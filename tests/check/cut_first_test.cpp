// cut_first: the first instance's plan is cut, before the grid runs, to the micro-batch counts
// of exactly the instances with its ranks that this process proves, each cut as an instance
// would cut it itself; the plan of every micro-batch is then let go. Each cut goes to one
// instance (MadeCuts), and an instance whose cut is gone cuts its own. Instances with other
// ranks share the cuts of their own plan, made once by the first of them to ask.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "check/full_bound.h"
#include "check/instance.h"
#include "check/prove_grid.h"
#include "exec/linker.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "reduce/mesh_axes.h"
#include "reduce/micro_batches.h"

namespace onnx_tv::check {
namespace {

namespace fs = std::filesystem;

struct First {
  reduce::FewerRanks fewer;
  exec::LinkedPlan linked;
  reduce::MicroBatches mb;
  std::string dir;  // spec.onnx and plan/
};

// tools/zoo/generate.py --small-plan dp4_pp2_mb4: data-parallel ranks shrink to 2 and 3, the
// four micro-batches to 2 and 3, a grid of four instances (dp2 mb2, dp2 mb3, dp3 mb2, dp3 mb3).
First first_of_small_plan() {
  // One folder per test: ctest runs the tests of this file side by side.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("onnx_tv_cut_first_" + test);
  fs::remove_all(dir);
  const std::string cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR +
                          "/tools/zoo/generate.py --small-plan dp4_pp2_mb4 --out " +
                          dir.string() + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const ir::Plan full = frontend::load_plan((dir / "plan").string());
  First f{reduce::choose_fewer_ranks(full, reduce::KeptWhole{}), {}, {}, dir.string()};
  f.linked = exec::link_plan(f.fewer.plan);
  f.mb = reduce::find_micro_batches(f.fewer.plan, f.linked);
  f.fewer.micro_batches = f.mb.count;
  f.fewer.micro_batch_count = 2;
  return f;
}

std::set<int64_t> counts(const std::map<int64_t, std::optional<reduce::MicroBatchCut>>& cuts) {
  std::set<int64_t> out;
  for (const auto& [n, cut] : cuts) {
    EXPECT_TRUE(cut.has_value()) << n << " micro-batches did not cut";
    out.insert(n);
  }
  return out;
}

TEST(CutFirst, CutsTheCountsOfTheInstancesWithTheFirstRanks) {
  const First f = first_of_small_plan();
  ASSERT_EQ(f.fewer.axes, std::vector<std::string>{"dp"});
  ASSERT_EQ(f.mb.count, 4);
  CheckOptions::Spread one;
  const auto cuts = cut_first(f.fewer, f.linked, f.mb, one);
  EXPECT_EQ(counts(cuts), (std::set<int64_t>{2, 3}));
  // Each cut is the instance's own: as many steps as the cut made there.
  for (int64_t n : {2, 3}) {
    const auto direct = reduce::cut_micro_batches(f.fewer.plan, f.linked, f.mb, n);
    ASSERT_TRUE(direct.has_value());
    EXPECT_EQ(cuts.at(n)->linked.steps.size(), direct->linked.steps.size()) << n;
    EXPECT_LT(cuts.at(n)->linked.steps.size(), f.linked.steps.size()) << n;
  }
}

TEST(CutFirst, CutsOnlyWhatThisProcessProves) {
  const First f = first_of_small_plan();
  // Four processes: process p proves grid point p; only points 0 and 1 keep the first ranks.
  const std::vector<std::set<int64_t>> want = {{2}, {3}, {}, {}};
  for (int p = 0; p < 4; ++p) {
    CheckOptions::Spread s;
    s.process = p;
    s.processes = 4;
    EXPECT_EQ(counts(cut_first(f.fewer, f.linked, f.mb, s)), want[size_t(p)]) << p;
  }
  // Three: process 0 proves points 0 and 3, 1 proves 1, 2 proves 2.
  const std::vector<std::set<int64_t>> want3 = {{2}, {3}, {}};
  for (int p = 0; p < 3; ++p) {
    CheckOptions::Spread s;
    s.process = p;
    s.processes = 3;
    EXPECT_EQ(counts(cut_first(f.fewer, f.linked, f.mb, s)), want3[size_t(p)]) << p;
  }
}

// A maker that must not run: the cuts were made ahead.
MadeCuts::Made not_called(const std::vector<int64_t>&) {
  ADD_FAILURE() << "cuts made again";
  return {};
}

TEST(CutFirst, EachCutIsTakenOnce) {
  const First f = first_of_small_plan();
  MadeCuts made(f.fewer, CheckOptions::Spread{});
  const MadeCuts::Ranks first = MadeCuts::ranks_of(f.fewer);
  ASSERT_EQ(first, (MadeCuts::Ranks{{"dp", 2}}));
  made.put(first, {cut_first(f.fewer, f.linked, f.mb, CheckOptions::Spread{}), ""});
  std::string why_not;
  auto two = made.take(first, 2, not_called, why_not);
  ASSERT_TRUE(two.has_value());
  ASSERT_TRUE(two->has_value());
  EXPECT_FALSE(made.take(first, 2, not_called, why_not).has_value()) << "a cut given twice";
  EXPECT_TRUE(made.take(first, 3, not_called, why_not).has_value());
  EXPECT_FALSE(made.take(first, 4, not_called, why_not).has_value())
      << "no instance keeps 4 of 4 micro-batches";
}

// The instances with other ranks than the first (dp3 with 2 and with 3 micro-batches) share
// one plan of every micro-batch: the first of them to ask cuts it to both counts.
TEST(CutFirst, OtherRanksAreCutOnceForEveryCountTheyKeep) {
  const First f = first_of_small_plan();
  const MadeCuts::Ranks three{{"dp", 3}};
  EXPECT_EQ(MadeCuts(f.fewer, {}).counts(three), (std::vector<int64_t>{2, 3}));
  // Four processes: process 2 proves dp3 with 2 micro-batches, process 3 with 3.
  CheckOptions::Spread s;
  s.processes = 4;
  s.process = 2;
  EXPECT_EQ(MadeCuts(f.fewer, s).counts(three), std::vector<int64_t>{2});
  EXPECT_TRUE(MadeCuts(f.fewer, s).counts(MadeCuts::ranks_of(f.fewer)).empty());

  MadeCuts made(f.fewer, {});
  std::vector<std::vector<int64_t>> asked;
  auto make = [&](const std::vector<int64_t>& counts) {
    asked.push_back(counts);
    MadeCuts::Made m;
    m.why_not = "seen";
    for (int64_t n : counts) m.cuts[n] = reduce::cut_micro_batches(f.fewer.plan, f.linked, f.mb, n);
    return m;
  };
  std::string why_not;
  auto two = made.take(three, 2, make, why_not);
  ASSERT_TRUE(two && *two);
  EXPECT_EQ(why_not, "seen");
  auto three_mb = made.take(three, 3, make, why_not);
  ASSERT_TRUE(three_mb && *three_mb);
  EXPECT_EQ(asked, (std::vector<std::vector<int64_t>>{{2, 3}}));
  EXPECT_LT((*two)->linked.steps.size(), (*three_mb)->linked.steps.size());
  EXPECT_FALSE(made.take(three, 3, make, why_not).has_value()) << "a cut given twice";
  EXPECT_EQ(asked.size(), 1u);
}

// Two instances of the same ranks asking at once: one makes the cuts, the other waits for
// them; a maker that fails leaves nothing made, and the next to ask makes them.
TEST(CutFirst, OneMakerPerRanksAndAFailedOneIsRetried) {
  const First f = first_of_small_plan();
  const MadeCuts::Ranks three{{"dp", 3}};
  MadeCuts made(f.fewer, {});
  std::atomic<int> calls = 0;
  auto make = [&](const std::vector<int64_t>& counts) {
    if (calls++ == 0) throw std::runtime_error("out of memory");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    MadeCuts::Made m;
    for (int64_t n : counts) m.cuts[n] = reduce::cut_micro_batches(f.fewer.plan, f.linked, f.mb, n);
    return m;
  };
  std::string why_not;
  EXPECT_THROW(made.take(three, 2, make, why_not), std::runtime_error);
  std::optional<MadeCuts::Cut> got[2];
  std::thread a([&] {
    std::string w;
    got[0] = made.take(three, 2, make, w);
  });
  std::thread b([&] {
    std::string w;
    got[1] = made.take(three, 3, make, w);
  });
  a.join();
  b.join();
  EXPECT_EQ(calls.load(), 2);
  EXPECT_TRUE(got[0] && *got[0]);
  EXPECT_TRUE(got[1] && *got[1]);
}

// An instance proven again after its cut was taken (alone, after running out of memory beside
// another) cuts the plan itself, and proves what it proved with the cut.
TEST(CutFirst, AnInstanceWhoseCutIsTakenCutsItsOwn) {
  First f = first_of_small_plan();
  const ir::Graph spec = frontend::load_model(f.dir + "/spec.onnx");
  const ir::Plan full = frontend::load_plan(f.dir + "/plan");
  const FullBound bound(spec, full, 0);
  MadeCuts made(f.fewer, {});
  made.put(MadeCuts::ranks_of(f.fewer), {cut_first(f.fewer, f.linked, f.mb, {}), ""});
  const Known known{nullptr, &f.mb, &made};
  CheckOptions options;
  options.jobs = 1;
  std::vector<int64_t> rank_nodes;  // of the instance proven: 2 of the 4 bodies each time
  for (const char* turn : {"with the cut", "with the cut taken"}) {
    CheckResult res;
    reduce::KeptWhole kept;
    EXPECT_EQ(try_instance(res, options, spec, f.fewer, known, bound, kept), Tried::Done) << turn;
    EXPECT_EQ(res.verdict, Verdict::Equivalent) << turn << ": " << res.message;
    rank_nodes.push_back(res.stats.rank_nodes);
  }
  EXPECT_GT(rank_nodes[0], 0);
  EXPECT_EQ(rank_nodes[0], rank_nodes[1]);
  int64_t uncut = 0;
  for (int64_t r = 0; r < f.fewer.plan.world_size; ++r)
    uncut += int64_t(f.fewer.plan.program_of(r).nodes.size());
  EXPECT_LT(rank_nodes[0], uncut) << "the instance kept every micro-batch";
}

// The first instance with other ranks (dp3, 2 micro-batches) cuts its plan for its sibling
// too (dp3, 3 micro-batches), which then proves from that cut.
TEST(CutFirst, AnInstanceWithOtherRanksCutsForItsSibling) {
  const First f = first_of_small_plan();
  const ir::Graph spec = frontend::load_model(f.dir + "/spec.onnx");
  const ir::Plan full = frontend::load_plan(f.dir + "/plan");
  const FullBound bound(spec, full, 0);
  MadeCuts made(f.fewer, {});
  const Known others{nullptr, nullptr, &made};
  CheckOptions options;
  options.jobs = 1;
  const MadeCuts::Ranks three{{"dp", 3}};
  const reduce::FewerRanks dp3_mb2 =
      reduce::with_counts(full, f.fewer, {{"dp", 3}, {reduce::kMicroBatches, 2}});
  CheckResult res;
  reduce::KeptWhole kept;
  EXPECT_EQ(try_instance(res, options, spec, dp3_mb2, others, bound, kept), Tried::Done);
  EXPECT_EQ(res.verdict, Verdict::Equivalent) << res.message;
  EXPECT_EQ(made.held(three), 1u) << "the sibling's cut was not made";
  const reduce::FewerRanks dp3_mb3 =
      reduce::with_counts(full, f.fewer, {{"dp", 3}, {reduce::kMicroBatches, 3}});
  CheckResult res3;
  EXPECT_EQ(try_instance(res3, options, spec, dp3_mb3, others, bound, kept), Tried::Done);
  EXPECT_EQ(res3.verdict, Verdict::Equivalent) << res3.message;
  EXPECT_GT(res3.stats.rank_nodes, res.stats.rank_nodes) << "3 micro-batches hold more than 2";
  EXPECT_EQ(made.held(three), 0u) << "the sibling's cut was not used";
}

}  // namespace
}  // namespace onnx_tv::check
