// Stage-wise proofs through the binary: correct zoo plans are proven with stage cuts and
// without them alike, and seeded bugs are refuted and located alike.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

nlohmann::json check_json(const std::string& model, const std::string& plan,
                          const std::string& extra, int* exit_code) {
  const auto dir = source_dir() / "models/zoo" / model;
  // One folder per check: the tests of this file run in parallel on the same models.
  std::string name = "stages_" + model + "_" + plan + extra;
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  auto json = fresh_dir(name) / "report.json";
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

// A seeded bug is refuted by the staged run itself, with the location the whole-program run
// gives: a misused collective (an all-gather where an all-reduce belongs) and a missing
// reduction, both found by summing rank tensors over their group, which a staged run must
// compare with the spec's cut atoms.
TEST(Stages, SeededBugsAreRefutedAndLocatedAsWithoutCuts) {
  struct Bug {
    const char *model, *plan, *output, *node;
  };
  const Bug bugs[] = {
      {"l1_b4_gqa", "bugs/dp2_allreduce_as_allgather", "grad_layers.0.w_q",
       "/grad_sync/layers.0.w_q/AllReduce"},
      {"l1_b2_mha", "bugs/tp2_missing_backward_reduce", "grad_x",
       "/mb1/layers.0/attn/Add_input_grad_1"},
  };
  for (const auto& b : bugs) {
    int code = -1;
    auto staged = check_json(b.model, b.plan, "", &code);
    EXPECT_EQ(code, 1) << b.plan;
    EXPECT_EQ(staged["verdict"], "NOT EQUIVALENT") << b.plan;
    EXPECT_EQ(staged["stats"]["staged"], true) << b.plan;
    EXPECT_EQ(staged["mismatch"]["spec_output"], b.output) << b.plan;
    EXPECT_EQ(staged["mismatch"]["rank_node"]["node"], b.node) << b.plan;
    EXPECT_FALSE(staged["mismatch"]["witness"].empty()) << b.plan;
    auto whole = check_json(b.model, b.plan, " --no-stages", &code);
    EXPECT_EQ(code, 1) << b.plan;
    EXPECT_EQ(whole["stats"]["staged"], false) << b.plan;
    EXPECT_EQ(whole["mismatch"]["spec_output"], staged["mismatch"]["spec_output"]) << b.plan;
    EXPECT_EQ(whole["mismatch"]["rank_node"], staged["mismatch"]["rank_node"]) << b.plan;
    EXPECT_EQ(whole["mismatch"]["spec_node"], staged["mismatch"]["spec_node"]) << b.plan;
  }
}

}  // namespace
}  // namespace onnx_tv::e2e
