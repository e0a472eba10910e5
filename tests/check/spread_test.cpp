// Processes proving one check together (CheckOptions::spread), here threads with an exchange in
// memory: each proves its share of the instances, and every one ends with the result one
// process proving them all gives, on a correct plan and on a wrong one.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check/check.h"

namespace onnx_tv {
namespace {

namespace fs = std::filesystem;

// tools/zoo/generate.py --small-plan dp4_pp2_mb4: a grid of four instances (2 and 3
// data-parallel ranks, 2 and 3 micro-batches).
fs::path generate(const std::string& bug) {
  // One folder per test: ctest runs the tests of this file side by side.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("onnx_tv_spread_" + test + "_" + bug);
  fs::remove_all(dir);
  const std::string cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR +
                          "/tools/zoo/generate.py --small-plan dp4_pp2_mb4" +
                          (bug.empty() ? "" : " --bug " + bug) + " --out " + dir.string() +
                          " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir;
}

// MPI_Allgatherv between threads: each round returns every thread's bytes, in thread order.
class Rendezvous {
 public:
  explicit Rendezvous(int n) : n_(n), slots_(static_cast<size_t>(n)) {}
  std::vector<std::string> exchange(int p, const std::string& mine) {
    std::unique_lock<std::mutex> lock(mu_);
    const int round = round_;
    slots_[size_t(p)] = mine;
    if (++arrived_ == n_) {
      all_ = slots_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    return all_;  // the next round needs this thread too: all_ holds until it is read
  }

 private:
  int n_, arrived_ = 0, round_ = 0;
  std::vector<std::string> slots_, all_;
  std::mutex mu_;
  std::condition_variable cv_;
};

std::vector<check::CheckResult> spread(const fs::path& dir, int n) {
  Rendezvous meet(n);
  std::vector<check::CheckResult> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int p = 0; p < n; ++p)
    threads.emplace_back([&, p] {
      check::CheckOptions o;
      // n processes on one machine share its cores
      o.spread = {p, n, [&, p](const std::string& mine) { return meet.exchange(p, mine); }, n};
      out[size_t(p)] = check::run((dir / "spec.onnx").string(), (dir / "plan").string(), o);
    });
  for (auto& t : threads) t.join();
  return out;
}

// What a report shows, without what differs between runs (time) or says how they ran.
check::CheckResult shown(check::CheckResult r) {
  r.stats.seconds = 0;
  r.stats.processes = 1;
  r.stats.process_instances.clear();
  return r;
}

TEST(Spread, ThreeProcessesShareTheInstancesOfACorrectPlan) {
  const fs::path dir = generate("");
  const check::CheckResult one = check::run((dir / "spec.onnx").string(), (dir / "plan").string());
  ASSERT_EQ(one.verdict, check::Verdict::Equivalent) << one.message;
  EXPECT_EQ(one.stats.processes, 1);
  EXPECT_EQ(one.stats.process_instances, std::vector<int64_t>{4});
  for (const check::CheckResult& r : spread(dir, 3)) {
    EXPECT_TRUE(shown(r) == shown(one)) << r.message;
    EXPECT_EQ(r.stats.processes, 3);
    // instance k on process k % 3
    EXPECT_EQ(r.stats.process_instances, (std::vector<int64_t>{2, 1, 1}));
  }
}

TEST(Spread, ThreeProcessesReportTheFirstFailingInstanceAsOneDoes) {
  const fs::path dir = generate("dp_average_half");
  const check::CheckResult one = check::run((dir / "spec.onnx").string(), (dir / "plan").string());
  ASSERT_EQ(one.verdict, check::Verdict::NotEquivalent) << one.message;
  ASSERT_TRUE(one.mismatch);
  for (const check::CheckResult& r : spread(dir, 3)) {
    EXPECT_TRUE(shown(r) == shown(one)) << r.message;
    ASSERT_TRUE(r.mismatch);
    EXPECT_EQ(r.mismatch->rank_node, one.mismatch->rank_node);
    // Process 0 stops after its first instance, which decides; the others prove theirs.
    EXPECT_EQ(r.stats.process_instances, (std::vector<int64_t>{1, 1, 1}));
  }
}

// More processes than instances: those without a share only exchange.
TEST(Spread, ProcessesWithoutAnInstanceStillAgree) {
  const fs::path dir = generate("");
  for (const check::CheckResult& r : spread(dir, 5)) {
    EXPECT_EQ(r.verdict, check::Verdict::Equivalent) << r.message;
    EXPECT_EQ(r.stats.process_instances, (std::vector<int64_t>{1, 1, 1, 1, 0}));
  }
}

}  // namespace
}  // namespace onnx_tv
