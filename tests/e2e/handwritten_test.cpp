// Plans written directly in the plan format (SPMD programs per stage, placements, bindings in
// model metadata, Send/Recv by peer_axis, group_axes collectives).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

std::string hw(const std::string& part) {
  return (source_dir() / "models/handwritten/mlp_dp2_pp2" / part).string();
}

TEST(Handwritten, PipelineWithDataParallelIsEquivalent) {
  CliRun r = run_cli("check " + hw("spec.onnx") + " " + hw("shards"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("EQUIVALENT: 4 ranks"), std::string::npos) << r.out;
}

TEST(Handwritten, LocalMeanLossIsCaughtAtTheScale) {
  auto json = fresh_dir("hw_json") / "r.json";
  CliRun r = run_cli("check " + hw("spec.onnx") + " " + hw("shards_local_mean") + " --json " +
                     json.string());
  ASSERT_EQ(r.exit_code, 1) << r.out;
  std::ifstream in(json);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["failing_outputs"], nlohmann::json({"loss", "dw1", "dw2"}));
  const auto& m = j["mismatch"];
  EXPECT_EQ(m["spec_output"], "loss");
  EXPECT_TRUE(m["partial"].get<bool>());
  EXPECT_EQ(m["ranks"], nlohmann::json({1, 3}));
  EXPECT_EQ(m["rank_node"]["node"], "/s1/loss/Scale");
  EXPECT_EQ(m["rank_node"]["rank"], 1);
}

}  // namespace
}  // namespace onnx_tv::e2e
