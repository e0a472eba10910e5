// Fewer ranks are proven at two counts per axis (reduce::count_grid): a sum over ranks of a
// term every rank adds is n times the term, and a plan scaled for one count is caught at the
// other, even without the counted-replica guard that would keep every rank. (The guard is
// what proves the same plan scaled by 1/n: without it, the instances refute it.) Where an
// output's degree in a count may pass 1 (a norm of an all-reduced sum), two counts prove
// nothing and the count keeps its ranks (reduce/count_degree.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "check/check.h"
#include "exec/linker.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "reduce/reduce.h"
#include "reduce/mesh_axes.h"
#include "reduce/micro_batches.h"

namespace onnx_tv {
namespace {

namespace fs = std::filesystem;

// tools/zoo/generate.py --small-plan PLAN, with a generator-level edit unless `bug` is
// empty, in a fresh folder.
fs::path generate(const std::string& bug, const std::string& plan = "tp4_mb2") {
  // One folder per test: ctest runs the tests of this file side by side.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("onnx_tv_count_grid_" + test + "_" + plan + bug);
  fs::remove_all(dir);
  const std::string cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR +
                          "/tools/zoo/generate.py --small-plan " + plan +
                          (bug.empty() ? "" : " --bug " + bug) + " --out " + dir.string() +
                          " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir;
}

check::CheckResult check_without_guard(const fs::path& dir) {
  check::CheckOptions o;
  o.count_guard = false;
  return check::run((dir / "spec.onnx").string(), (dir / "plan").string(), o);
}

TEST(CountGrid, TwoCountsPerAxis) {
  reduce::FewerRanks f;
  f.axes = {"dp", "tp"};
  const auto grid = reduce::count_grid(f);
  ASSERT_EQ(grid.size(), 4u);
  for (int64_t dp : {2, 3})
    for (int64_t tp : {2, 3})
      EXPECT_NE(std::find(grid.begin(), grid.end(),
                          std::map<std::string, int64_t>{{"dp", dp}, {"tp", tp}}),
                grid.end());
}

// A plan with fewer ranks is proven as two instances, and progress says which is running.
TEST(CountGrid, ProgressNamesTheInstance) {
  std::vector<std::string> phases;
  check::CheckOptions o;
  o.jobs = 1;
  o.on_progress = [&](const check::Progress& p) { phases.push_back(p.phase); };
  const fs::path dir = generate("", "dp4_mb2");
  EXPECT_EQ(check::run((dir / "spec.onnx").string(), (dir / "plan").string(), o).verdict,
            check::Verdict::Equivalent);
  for (const char* want : {"instance 1/2: reduce", "instance 2/2: reduce"})
    EXPECT_NE(std::find(phases.begin(), phases.end(), want), phases.end()) << want;
}

// Two at once: progress counts the instances done, and every phase of theirs reaches the
// caller as that count.
TEST(CountGrid, ProgressCountsInstancesProvenAtOnce) {
  std::vector<check::Progress> steps;
  std::mutex mu;
  check::CheckOptions o;
  o.jobs = 2;
  o.on_progress = [&](const check::Progress& p) {
    std::lock_guard<std::mutex> hold(mu);
    steps.push_back(p);
  };
  const fs::path dir = generate("", "dp4_mb2");
  EXPECT_EQ(check::run((dir / "spec.onnx").string(), (dir / "plan").string(), o).verdict,
            check::Verdict::Equivalent);
  int64_t most = 0, counts = 0;
  for (const check::Progress& p : steps) {
    if (p.phase != "instances") continue;
    ++counts;
    EXPECT_EQ(p.total, 2);
    EXPECT_GE(p.done, most);  // never backwards
    most = p.done;
  }
  EXPECT_EQ(most, 2);
  EXPECT_GT(counts, 3);  // not only at the ends of instances
}

// The residual added inside the all-reduce as x / 2 on each of 4 TP ranks: right with 2. The
// RMS norm after the all-reduce is not a polynomial of that sum, so 2 and 3 TP ranks would
// not prove every count: the axis keeps its 4 ranks, and the bug is refuted there.
TEST(CountGrid, ANormOfASumOverRanksKeepsThemAll) {
  const check::CheckResult r = check_without_guard(generate("tp_residual_folded_half"));
  EXPECT_EQ(r.verdict, check::Verdict::NotEquivalent) << r.message;
  EXPECT_TRUE(r.reduction.fewer_ranks.empty());
  EXPECT_EQ(r.stats.ranks, 4);
  bool said = false;
  for (const auto& k : r.reduction.kept_full)
    said |= k.find("mesh axis 'tp' keeps its 4 ranks") != std::string::npos &&
            k.find("degree unbounded") != std::string::npos;
  EXPECT_TRUE(said) << "no reason given for keeping the TP ranks";
}

// Sequence parallelism: the norm after the reduce-scatter over TP ranks refuses their count
// before anything is linked; the whole instance's inference refuses it as well (the mask
// constant holding infinities ties the sequence to it), so nothing is lost by not linking.
TEST(CountGrid, SequenceParallelRanksAreRefusedBeforeLinkingAndByInference) {
  const fs::path dir = generate("", "tp4_sp_mb2");
  const ir::Plan full = frontend::load_plan((dir / "plan").string());
  const ir::Graph spec = frontend::load_model((dir / "spec.onnx").string());
  const reduce::FewerRanks first = reduce::choose_fewer_ranks(full, {});
  const auto before = reduce::refused_before_linking(first);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->axis, "tp");
  EXPECT_NE(before->why.find("seen before linking"), std::string::npos) << before->why;
  const reduce::Outcome whole = reduce::reduce_plan(spec, first, exec::link_plan(first.plan));
  ASSERT_TRUE(whole.keep_ranks);
  EXPECT_EQ(whole.keep_ranks->axis, "tp");
  EXPECT_NE(whole.keep_ranks->why.find("constant"), std::string::npos) << whole.keep_ranks->why;
  // The check says the first reason.
  const check::CheckResult r =
      check::run((dir / "spec.onnx").string(), (dir / "plan").string(), check::CheckOptions{});
  EXPECT_EQ(r.verdict, check::Verdict::Equivalent) << r.message;
  bool said = false;
  for (const auto& k : r.reduction.kept_full) said |= k.find("seen before linking") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CountGrid, MicroBatchesAreOneMoreCount) {
  reduce::FewerRanks f;
  f.axes = {"dp"};
  f.micro_batches = 4;
  const auto grid = reduce::count_grid(f);
  ASSERT_EQ(grid.size(), 4u);
  for (int64_t dp : {2, 3})
    for (int64_t mb : {2, 3})
      EXPECT_NE(std::find(grid.begin(), grid.end(),
                          std::map<std::string, int64_t>{{"dp", dp}, {reduce::kMicroBatches, mb}}),
                grid.end());
}

// The micro-batches kept by the instance that decided: the rows of x it holds.
int64_t rows_of_x(const check::CheckResult& r) {
  for (const auto& d : r.reduction.dims)
    if (d.value == "x" && d.axis == 0) return d.reduced;
  return -1;
}

// Weight decay added by each of 4 micro-batches (models/handwritten/mlp_wd_mb4), without the
// guard that keeps every micro-batch: lam / 4 each is right for 4 only, and refuted with 2;
// lam / 2 each is right with 2, and refuted with 3.
TEST(CountGrid, AShareScaledForOneCountOfMicroBatchesIsRefutedAtAnother) {
  const fs::path hw = fs::path(ONNX_TV_SOURCE_DIR) / "models/handwritten/mlp_wd_mb4";
  check::CheckOptions o;
  o.count_guard = false;
  const check::CheckResult quarter = check::run((hw / "spec.onnx").string(), (hw / "shards").string(), o);
  EXPECT_EQ(quarter.verdict, check::Verdict::NotEquivalent) << quarter.message;
  EXPECT_EQ(quarter.reduction.fewer_micro_batches, "4 per program -> 2 and 3");
  EXPECT_EQ(rows_of_x(quarter), 2);
  const check::CheckResult half =
      check::run((hw / "spec.onnx").string(), (hw / "shards_wd_per_two").string(), o);
  EXPECT_EQ(half.verdict, check::Verdict::NotEquivalent) << half.message;
  EXPECT_EQ(rows_of_x(half), 3);
}

}  // namespace
}  // namespace onnx_tv
