// Fewer micro-batches (reduce/micro_batches.h) through the binary: a pipeline plan with four
// micro-batches per stage program (tools/zoo/generate.py --small-plan dp2_tp2_pp2_mb4) and
// hand-written gradient accumulation (models/handwritten/mlp_mb4, mlp_wd_mb4), proven with
// 2 and 3 micro-batches, with all four (--no-reduce), and with seeded bugs.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

using nlohmann::json;

std::filesystem::path generate(const std::string& bug) {
  const auto dir = fresh_dir("fewer_micro_batches_" + (bug.empty() ? "ok" : bug));
  EXPECT_TRUE(generate_zoo("--small-plan dp2_tp2_pp2_mb4" + (bug.empty() ? "" : " --bug " + bug), dir));
  return dir;
}

json check(const std::string& spec, const std::string& shards, const std::string& flags = "") {
  // ctest runs each test in a process of its own, at the same time as others: the folder is
  // named by the test, and numbered within it.
  static int n = 0;
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto report = fresh_dir("fewer_micro_batches_" + test + std::to_string(n++)) / "r.json";
  CliRun r = run_cli("check " + spec + " " + shards + " --no-progress --json " + report.string() +
                     " " + flags);
  std::ifstream in(report);
  if (!in) {
    ADD_FAILURE() << "no report: " << r.out;
    return json::object();
  }
  return json::parse(in);
}

json check(const std::filesystem::path& dir, const std::string& flags = "") {
  return check((dir / "spec.onnx").string(), (dir / "plan").string(), flags);
}

std::string handwritten(const std::string& part) {
  return (source_dir() / "models/handwritten" / part).string();
}

bool mentions(const json& list, const std::string& what) {
  for (const auto& s : list)
    if (s.get<std::string>().find(what) != std::string::npos) return true;
  return false;
}

TEST(FewerMicroBatches, PipelinePlanIsProvenWithTwoAndThreeMicroBatches) {
  const auto dir = generate("");
  const json r = check(dir);
  EXPECT_EQ(r["verdict"], "EQUIVALENT");
  EXPECT_EQ(r["reduction"]["fewer_micro_batches"], "4 per program -> 2 and 3");
  EXPECT_EQ(r["stats"]["ranks"], 8);
  EXPECT_EQ(check(dir, "--no-reduce")["verdict"], "EQUIVALENT");
  const json parallel = check(dir, "--jobs 2");
  EXPECT_EQ(parallel["verdict"], "EQUIVALENT");
  EXPECT_EQ(parallel["reduction"]["fewer_micro_batches"], "4 per program -> 2 and 3");
}

// Every micro-batch scaled by 2/mb: the bodies are alike, so 2 and 3 stand for all of them, and
// the constant written for 4 micro-batches is wrong in the instances as at full size.
// With --jobs 2 the same instance (the first in grid order) decides.
TEST(FewerMicroBatches, EveryMicroBatchMisscaledIsCaughtWithFewer) {
  const auto dir = generate("microbatch_scale_all");
  const json r = check(dir);
  EXPECT_EQ(r["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(r["reduction"]["fewer_micro_batches"], "4 per program -> 2 and 3");
  EXPECT_EQ(r["mismatch"]["spec_output"], "grad_x");
  EXPECT_EQ(r["mismatch"]["spec_node"]["node"], "/loss/Mul_dlogits_grad");
  const json parallel = check(dir, "--jobs 2");
  EXPECT_EQ(parallel["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(parallel["reduction"]["dims"], r["reduction"]["dims"]);
  EXPECT_EQ(parallel["mismatch"], r["mismatch"]);
}

// Only the last micro-batch misscaled: its body differs from the first, so every micro-batch is
// kept, and the failure is in the last one's rows.
TEST(FewerMicroBatches, OneMicroBatchMisscaledKeepsThemAll) {
  const json r = check(generate("microbatch_scale_last"));
  EXPECT_EQ(r["verdict"], "NOT EQUIVALENT");
  EXPECT_FALSE(r["reduction"].contains("fewer_micro_batches"));
  EXPECT_TRUE(mentions(r["reduction"]["kept_full"], "micro-batches keep their full count"))
      << r["reduction"]["kept_full"];
  EXPECT_TRUE(mentions(r["reduction"]["kept_full"], "micro-batch 3")) << r["reduction"]["kept_full"];
  EXPECT_EQ(r["mismatch"]["rank_value"], "grad_x_mb3@rank0");
}

// One Sum over the micro-batches' values, constants written once per body; or a chain of
// Adds that starts from a zero constant.
TEST(FewerMicroBatches, HandwrittenAccumulationIsProvenWithFewer) {
  for (const char* shards : {"mlp_mb4/shards", "mlp_mb4/shards_from_zero"}) {
    const json r = check(handwritten("mlp_mb4/spec.onnx"), handwritten(shards));
    EXPECT_EQ(r["verdict"], "EQUIVALENT") << shards;
    EXPECT_EQ(r["reduction"]["fewer_micro_batches"], "4 per program -> 2 and 3") << shards;
  }
}

// Weight decay added by every micro-batch (lam / 4 each): a sum that counts its micro-batches,
// so all four are kept, with a warning; with lam / 2 each, the full count refutes it.
TEST(FewerMicroBatches, TermsEveryMicroBatchAddsKeepThemAll) {
  const json ok = check(handwritten("mlp_wd_mb4/spec.onnx"), handwritten("mlp_wd_mb4/shards"));
  EXPECT_EQ(ok["verdict"], "EQUIVALENT");
  EXPECT_FALSE(ok["reduction"].contains("fewer_micro_batches"));
  EXPECT_TRUE(mentions(ok["warnings"], "fewer micro-batches not used")) << ok["warnings"];
  EXPECT_TRUE(mentions(ok["warnings"], "/accumulate/Sum_")) << ok["warnings"];
  const json bad =
      check(handwritten("mlp_wd_mb4/spec.onnx"), handwritten("mlp_wd_mb4/shards_wd_per_two"));
  EXPECT_EQ(bad["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(bad["failing_outputs"], json({"loss", "dw2"}));
}

// Each body adds 1 written as (s+1)^2 - s^2 - 2s, products kept as definitions of their own:
// the guard compares expanded forms too, keeps every micro-batch, and the plan (3c where the
// spec has c) is refuted; with 2 and 3 bodies alone it would be proven.
TEST(FewerMicroBatches, ATermHiddenInProductsStillKeepsThemAll) {
  const json r = check(handwritten("hidden_count_mb4/spec.onnx"), handwritten("hidden_count_mb4/shards"));
  EXPECT_EQ(r["verdict"], "NOT EQUIVALENT");
  // The square of a sum over micro-batches has degree 2 in their count: 2 and 3 prove nothing.
  EXPECT_TRUE(mentions(r["reduction"]["kept_full"], "has degree 2 on the plan's side"))
      << r["reduction"]["kept_full"];
}

}  // namespace
}  // namespace onnx_tv::e2e
