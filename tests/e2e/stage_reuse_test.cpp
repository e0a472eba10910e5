// Stage obligations (check/stage_run.h) as a user sees them: a deeper model proves its added
// layers by reuse alone, the verdict is the one of running every stage, and a
// wrong plan is still refuted at its bug's location with reuse on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

using nlohmann::json;

struct Stages {
  int64_t total = 0, proven = 0, reused = 0;
  int exit_code = -1;
};

Stages check(const std::filesystem::path& dir, const std::string& options = "") {
  const std::filesystem::path report = dir / "report.json";
  const CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / "plan").string() +
                           " --no-progress --json " + report.string() + options);
  Stages s;
  s.exit_code = r.exit_code;
  std::ifstream in(report);
  const json j = json::parse(in);
  const json& st = j["stats"]["stages"];
  s.total = st["total"].get<int64_t>();
  s.proven = st["proven"].get<int64_t>();
  s.reused = st["reused"].get<int64_t>();
  return s;
}

// Tests run in parallel: each names its own folder.
std::filesystem::path generate(int layers, const std::string& test) {
  const auto dir = fresh_dir("stage_reuse_" + test + "_" + std::to_string(layers));
  EXPECT_TRUE(generate_zoo("--real-plan 8b_dp2_tp2_pp2_mb2 --layers " + std::to_string(layers), dir));
  return dir;
}

TEST(StageReuse, DeeperModelReusesWhatItAdds) {
  const Stages four = check(generate(4, "deeper"));
  const Stages eight = check(generate(8, "deeper"));
  ASSERT_EQ(four.exit_code, 0);
  ASSERT_EQ(eight.exit_code, 0);
  EXPECT_GT(four.reused, 0);
  // Four layers more are the same obligations as the layers before them: the distinct ones,
  // which are all that is proven, do not grow with depth.
  EXPECT_EQ(eight.proven, four.proven);
  EXPECT_GT(eight.reused, four.reused);
  EXPECT_EQ(eight.total, eight.proven + eight.reused);
}

TEST(StageReuse, OffRunsEveryStageWithTheSameVerdict) {
  const auto dir = generate(4, "off");
  const Stages off = check(dir, " --no-reuse");
  EXPECT_EQ(off.exit_code, 0);
  EXPECT_EQ(off.reused, 0);
  EXPECT_EQ(off.proven, 0);  // the stage-wise run without obligations
}

// All but the last line: the summary's time and counts differ.
std::string report_body(const std::string& out) {
  const size_t last = out.rfind('\n', out.size() >= 2 ? out.size() - 2 : 0);
  return last == std::string::npos ? "" : out.substr(0, last);
}

TEST(StageReuse, WrongPlanGivesTheSameReportWithReuseOn) {
  const auto dir = fresh_dir("stage_reuse_bug");
  ASSERT_TRUE(generate_zoo("--small-plan dp2_tp2_pp2_mb4 --bug dp_average_half", dir));
  const std::string args =
      "check " + (dir / "spec.onnx").string() + " " + (dir / "plan").string() + " --no-progress";
  const CliRun on = run_cli(args), off = run_cli(args + " --no-reuse");
  EXPECT_EQ(on.exit_code, 1) << on.out;
  EXPECT_NE(on.out.find("NOT EQUIVALENT"), std::string::npos) << on.out;
  EXPECT_NE(on.out.find("witness"), std::string::npos) << on.out;
  EXPECT_EQ(report_body(on.out), report_body(off.out));
}

}  // namespace
}  // namespace onnx_tv::e2e
