// Depth folding (docs/design.md section 4d) as a user sees it: a deeper plan leaves out more
// layers with the same verdict, and a layer that differs from its neighbours is kept and
// refuted at its own location.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

using nlohmann::json;

struct Folded {
  int exit_code = -1;
  int64_t left_out = 0, proven = 0;
  std::string out;
};

Folded check(const std::filesystem::path& dir, const std::string& options = "") {
  const std::filesystem::path report = dir / "report.json";
  const CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / "plan").string() +
                           " --no-progress --json " + report.string() + options);
  Folded f;
  f.exit_code = r.exit_code;
  f.out = r.out;
  std::ifstream in(report);
  const json j = json::parse(in);
  f.left_out = j["stats"]["layers"]["left_out"].get<int64_t>();
  f.proven = j["stats"]["stages"]["proven"].get<int64_t>();
  return f;
}

// The Llama-3 8B plan of the zoo (DP2 x TP2 x PP2, 2 micro-batches) at `layers` layers, in a
// folder of its own.
std::filesystem::path generate(int layers, const std::string& test) {
  const auto dir = fresh_dir("depth_fold_" + test + "_" + std::to_string(layers));
  EXPECT_TRUE(generate_zoo("--real-plan 8b_dp2_tp2_pp2_mb2 --layers " + std::to_string(layers), dir));
  return dir;
}

TEST(DepthFold, DeeperPlanLeavesOutMoreWithTheSameVerdict) {
  const Folded eight = check(generate(8, "deeper"));
  const Folded sixteen = check(generate(16, "deeper"));
  ASSERT_EQ(eight.exit_code, 0) << eight.out;
  ASSERT_EQ(sixteen.exit_code, 0) << sixteen.out;
  EXPECT_GT(eight.left_out, 0);
  // One instance (no axis has more than 2 ranks, 2 micro-batches): the 8 layers more, 4 in
  // each pipeline stage, are all left out.
  EXPECT_EQ(sixteen.left_out - eight.left_out, 8);
  EXPECT_EQ(sixteen.proven, eight.proven);
  EXPECT_NE(sixteen.out.find("left out as the same as one kept"), std::string::npos) << sixteen.out;
  const Folded off = check(generate(16, "off"), " --no-fold");
  EXPECT_EQ(off.exit_code, 0) << off.out;
  EXPECT_EQ(off.left_out, 0);
}

// Layer 7 of 8 (the last of the second pipeline stage) is left out of the correct plan; here
// its attention scale differs in the rank programs. It is kept, and the bug is refuted at it.
TEST(DepthFold, ALayerWithAnotherConstantIsKeptAndRefuted) {
  const auto dir = generate(8, "constant");
  const std::string change = "/usr/bin/python3 " + source_dir().string() +
                             "/tools/zoo/change_layer.py scale " + dir.string() + " 7";
  ASSERT_EQ(run_command(change).exit_code, 0) << change;
  const Folded f = check(dir);
  EXPECT_EQ(f.exit_code, 1) << f.out;
  EXPECT_NE(f.out.find("NOT EQUIVALENT"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("first diverging operator, spec: /layers.7/attn/Mul_scale"), std::string::npos)
      << f.out;
  EXPECT_EQ(f.left_out, 0);  // the verdict is the whole instance's
}

}  // namespace
}  // namespace onnx_tv::e2e
