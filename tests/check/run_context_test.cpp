// What bounds a check travels with it (check::CheckOptions -> exec::RunLimits), not in globals: two
// checks run at once keep their own options and traces. (A node that would outgrow
// --max-elements: tests/e2e/malformed_node_test.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "check/check.h"

namespace onnx_tv {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(ONNX_TV_SOURCE_DIR) / "models/examples/mlp_tp2";

TEST(RunContext, TwoChecksAtOnceKeepTheirOwnLimitsAndTraces) {
  std::mutex m;
  std::set<std::string> traced[2];
  check::CheckResult res[2];
  auto run = [&](int k) {
    check::CheckOptions o;
    o.reduce = false;
    o.stages = false;
    o.trace = [&, k](const std::string& file, const std::string&, double, size_t) {
      std::lock_guard<std::mutex> lock(m);
      traced[k].insert(file);
    };
    res[k] = check::run((kExample / "spec.onnx").string(), (kExample / (k ? "shards" : "shards_bug")).string(), o);
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  EXPECT_EQ(res[0].verdict, check::Verdict::NotEquivalent) << res[0].message;
  EXPECT_EQ(res[1].verdict, check::Verdict::Equivalent) << res[1].message;
  // Each trace saw its own plan's rank programs only.
  auto ranks_of = [](const std::set<std::string>& files, const std::string& folder) {
    int n = 0;
    for (const auto& f : files) n += f.find("/" + folder + "/") != std::string::npos;
    return n;
  };
  EXPECT_GT(ranks_of(traced[0], "shards_bug"), 0);
  EXPECT_EQ(ranks_of(traced[0], "shards"), 0);
  EXPECT_GT(ranks_of(traced[1], "shards"), 0);
  EXPECT_EQ(ranks_of(traced[1], "shards_bug"), 0);
}

}  // namespace
}  // namespace onnx_tv
