// The README's example, run through the binary: verdicts, exit codes, reports.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

std::string example(const std::string& part) {
  return (source_dir() / "models/examples/mlp_tp2" / part).string();
}

TEST(Example, CorrectPlanIsEquivalent) {
  CliRun r = run_cli("check " + example("spec.onnx") + " " + example("shards"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("EQUIVALENT: 2 ranks"), std::string::npos) << r.out;
}

TEST(Example, MissingAllReduceIsLocated) {
  auto json = fresh_dir("example_json") / "report.json";
  CliRun r = run_cli("check " + example("spec.onnx") + " " + example("shards_bug") + " --json " +
                     json.string());
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT EQUIVALENT"), std::string::npos) << r.out;
  std::ifstream in(json);
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(j["exit_code"], 1);
  const auto& m = j["mismatch"];
  EXPECT_EQ(m["spec_output"], "y");
  EXPECT_EQ(m["rank_node"]["node"], "/fc2/MatMul");
  EXPECT_EQ(m["rank_node"]["rank"], 0);
  EXPECT_EQ(m["spec_node"]["node"], "/fc2/MatMul");
  // The witness really separates the two sides.
  EXPECT_FALSE(m["witness"].empty());
  EXPECT_NE(m["spec_value"], m["plan_value"]);
}

TEST(Example, UsageErrors) {
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);
  CliRun r = run_cli("check " + example("spec.onnx"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("usage"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("check a b --bogus").exit_code, 2);
  EXPECT_EQ(run_cli("--help").exit_code, 0);
  for (const char* bad : {"0", "-2", "two"})
    EXPECT_EQ(run_cli("check " + example("spec.onnx") + " " + example("shards") + " --jobs " + bad)
                  .exit_code,
              2)
        << bad;
  for (const char* bad : {"", "0", "-3", "12x"}) {
    CliRun m = run_cli("check " + example("spec.onnx") + " " + example("shards") +
                       " --max-elements " + bad);
    EXPECT_EQ(m.exit_code, 2) << bad << "\n" << m.out;
    EXPECT_NE(m.out.find("--max-elements"), std::string::npos) << m.out;
  }
}

// Past --max-memory a proof stops with UNKNOWN naming the limit and where it stopped, instead
// of being killed by the system.
TEST(Example, MaxMemoryStopsWithUnknown) {
  const std::string zoo = (source_dir() / "models/zoo/l1_b4_gqa").string();
  const std::string args = "check " + zoo + "/spec.onnx " + zoo + "/plans/dp2_mb2";
  CliRun r = run_cli(args + " --max-memory 0.001");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--max-memory) and was stopped at"), std::string::npos) << r.out;
  // Every phase is bounded: with 1 MB the first check of memory falls in loading the spec
  // (loading, linking and shape reduction once ran unbounded until the proof's first node;
  // each phase: tests/check/memory_phases_test.cpp).
  EXPECT_NE(r.out.find("stopped at loading " + zoo + "/spec.onnx"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli(args + " --max-memory 64").exit_code, 0);
  for (const char* bad : {"0", "-1", "lots"})
    EXPECT_EQ(run_cli(args + " --max-memory " + bad).exit_code, 2) << bad;
}

// An instance larger than --max-elements is not proven, and the message says how to allow it.
TEST(Example, MaxElementsBoundsTheInstance) {
  CliRun small = run_cli("check " + example("spec.onnx") + " " + example("shards") +
                         " --max-elements 10");
  EXPECT_EQ(small.exit_code, 3) << small.out;
  EXPECT_NE(small.out.find("--max-elements"), std::string::npos) << small.out;
  EXPECT_EQ(run_cli("check " + example("spec.onnx") + " " + example("shards") +
                    " --max-elements 100000").exit_code,
            0);
}

}  // namespace
}  // namespace onnx_tv::e2e
