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

// Proven on a reduced instance, the report also names the refuted element and the witness
// inputs at full size: w1's columns are two tensor-parallel pieces of 8, each reduced to 2, so
// reduced column c stands for column c / 2 * 8 + c % 2; every other axis keeps its first
// positions.
TEST(Example, ReducedPositionsNamedAtFullSize) {
  auto json = fresh_dir("example_full_size") / "report.json";
  CliRun r = run_cli("check " + example("spec.onnx") + " " + example("shards_bug") + " --json " +
                     json.string());
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("(indices and witness below are in the reduced instance; \"at full "
                       "size\" gives the real positions they stand for)"),
            std::string::npos)
      << r.out;
  std::ifstream in(json);
  const nlohmann::json m = nlohmann::json::parse(in)["mismatch"];
  ASSERT_TRUE(m.contains("full_size")) << m.dump(1);
  const auto& full = m["full_size"];
  EXPECT_EQ(full["element"], m["element"]);  // y keeps its first rows and columns
  EXPECT_NE(r.out.find("at full size: element " + full["element"].dump()), std::string::npos)
      << r.out;
  ASSERT_EQ(full["witness"].size(), m["witness"].size()) << m.dump(1);
  bool moved = false;
  std::string line = "at full size: ";
  for (const auto& [symbol, value] : m["witness"].items()) {
    const std::string at = full["witness"][symbol];
    line += (line.back() == ' ' ? "" : ", ") + at;
    if (symbol.rfind("w1[", 0) == 0) {
      const size_t comma = symbol.find(',');
      const int col = std::stoi(symbol.substr(comma + 1));
      EXPECT_EQ(at, symbol.substr(0, comma + 1) + std::to_string(col / 2 * 8 + col % 2) + "]");
      moved = moved || col >= 2;
    } else if (symbol.rfind("w2[", 0) == 0) {
      const int row = std::stoi(symbol.substr(3));
      EXPECT_EQ(at, "w2[" + std::to_string(row / 2 * 8 + row % 2) + symbol.substr(symbol.find(',')));
      moved = moved || row >= 2;
    } else {
      EXPECT_EQ(at, symbol);  // x keeps its first positions
    }
  }
  EXPECT_TRUE(moved) << "the witness should touch the second piece: " << m.dump(1);
  EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line << "\n" << r.out;

  // At full size there is nothing to map.
  CliRun full_run = run_cli("check " + example("spec.onnx") + " " + example("shards_bug") +
                            " --no-reduce --json " + json.string());
  ASSERT_EQ(full_run.exit_code, 1) << full_run.out;
  EXPECT_EQ(full_run.out.find("at full size: "), std::string::npos) << full_run.out;
  std::ifstream in2(json);
  EXPECT_FALSE(nlohmann::json::parse(in2)["mismatch"].contains("full_size"));
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
