// The named real-size Llama-3 8B plans (tools/zoo/generate.py --real-plan) through the binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

// The named real-size plans: proven stage-wise, not by the whole-program fallback (which does
// not reach 32 layers), at two layers: the first at which a stage's gradient is passed to the
// stage before it.
TEST(RealPlans, ProveStageWise) {
  const std::pair<std::string, int> plans[] = {{"8b_dp2_tp2_pp2_mb2", 2},
                                               {"8b_cp2_dp2_tp2_pp2_mb2", 2}};
  for (const auto& [name, layers] : plans) {
    const auto dir = fresh_dir("real_plan_" + name);
    ASSERT_TRUE(generate_zoo("--real-plan " + name + " --layers " + std::to_string(layers), dir))
        << name;
    const auto json = dir / "report.json";
    CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / "plan").string() +
                       " --no-progress --json " + json.string());
    std::ifstream in(json);
    ASSERT_TRUE(in) << r.out;
    auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["verdict"], "EQUIVALENT") << name << "\n" << r.out;
    EXPECT_EQ(j["stats"]["staged"], true) << name << "\n" << r.out;
    EXPECT_EQ(j["reduction"]["applied"], true) << name;
  }
}

// The zoo's Llama-3 8B plan with 512 data-parallel ranks, one program for all (generate.py
// --real 8b, at two layers): proven with 2 and 3 ranks; averaging by 1/256 on every rank is
// refuted.
TEST(RealPlans, DataParallel512WithFewerRanks) {
  for (const std::string bug : {"", "dp_average_half"}) {
    const auto dir = fresh_dir("real_8b_dp512" + bug);
    ASSERT_TRUE(generate_zoo("--real 8b --layers 2" + (bug.empty() ? "" : " --bug " + bug), dir))
        << bug;
    const auto json = dir / "report.json";
    CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " +
                       (dir / "dp512.spmd").string() + " --no-progress --json " + json.string());
    std::ifstream in(json);
    ASSERT_TRUE(in) << r.out;
    auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["reduction"]["fewer_ranks"],
              nlohmann::json::array({"mesh axis 'dp': 512 ranks -> 2 and 3"}))
        << r.out;
    if (bug.empty()) {
      EXPECT_EQ(j["verdict"], "EQUIVALENT") << r.out;
    } else {
      EXPECT_EQ(j["verdict"], "NOT EQUIVALENT") << r.out;
      EXPECT_EQ(j["mismatch"]["spec_output"], "grad_x") << r.out;
    }
  }
}

}  // namespace
}  // namespace onnx_tv::e2e
