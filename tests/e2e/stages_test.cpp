// Stage-wise proofs through the binary: correct zoo plans are proven with stage cuts and
// without them alike, and a seeded bug is never concluded by the staged run.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

nlohmann::json check_json(const std::string& model, const std::string& plan,
                          const std::string& extra, int* exit_code) {
  const auto dir = source_dir() / "models/zoo" / model;
  auto json = fresh_dir("stages_" + model) / "report.json";
  CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / plan).string() +
                     " --no-progress --json " + json.string() + extra);
  *exit_code = r.exit_code;
  std::ifstream in(json);
  return nlohmann::json::parse(in);
}

TEST(Stages, CorrectPlansProveWithAndWithoutCuts) {
  const std::pair<const char*, const char*> plans[] = {
      {"l1_b1_range", "plans/cp2_tp2"},
      {"l1_b2_mha", "plans/tp2_mb2"},
      {"l1_b4_gqa", "plans/dp2_mb2_ms"},
      {"l1_b4_gqa", "plans/zero2_dp2_mb2.spmd"},
  };
  for (const auto& [model, plan] : plans) {
    int code = -1;
    auto staged = check_json(model, plan, "", &code);
    EXPECT_EQ(code, 0) << model << " " << plan;
    EXPECT_EQ(staged["stats"]["staged"], true) << model << " " << plan;
    auto whole = check_json(model, plan, " --no-stages", &code);
    EXPECT_EQ(code, 0) << model << " " << plan;
    EXPECT_EQ(whole["stats"]["staged"], false) << model << " " << plan;
    EXPECT_EQ(staged["verdict"], whole["verdict"]);
  }
}

TEST(Stages, SeededBugIsDecidedByTheWholeProgramRun) {
  int code = -1;
  auto j = check_json("l1_b4_gqa", "bugs/dp2_microbatch_missing_last_op", "", &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(j["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(j["stats"]["staged"], false);
}

}  // namespace
}  // namespace onnx_tv::e2e
