// A LoRA-style adapter after a LayerNorm of dimension 256 (tools/examples/make_lora.py): the
// plan regroups (LN(x) @ A) @ B as LN(x) @ (A @ B). The correct plan is proven; the plan with
// a small error term (2^-40 * x) is refuted with a witness instead of running its expansions
// to the budget and ending UNKNOWN.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

std::string lora(const std::string& part) {
  return (source_dir() / "models/handwritten/lora_ln256" / part).string();
}

TEST(Lora, RegroupedProductIsEquivalent) {
  CliRun r = run_cli("check " + lora("spec.onnx") + " " + lora("shards"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("EQUIVALENT: 2 ranks"), std::string::npos) << r.out;
}

TEST(Lora, SmallErrorTermIsRefuted) {
  auto json = fresh_dir("lora_json") / "r.json";
  CliRun r = run_cli("check " + lora("spec.onnx") + " " + lora("shards_wrong") + " --json " +
                     json.string());
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT EQUIVALENT"), std::string::npos) << r.out;
  std::ifstream in(json);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["failing_outputs"], nlohmann::json({"y"}));
  const auto& m = j["mismatch"];
  EXPECT_EQ(m["spec_output"], "y");
  EXPECT_NE(m["spec_value"], m["plan_value"]);
  EXPECT_FALSE(m["witness"].empty());
}

}  // namespace
}  // namespace onnx_tv::e2e
