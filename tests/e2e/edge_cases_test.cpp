// Small plans on inputs that once gave a wrong verdict or a crash, run through the binary
// (models/edge_cases, written by tools/examples/make_edge_cases.py).
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

CliRun check_case(const std::string& name, const std::string& shards = "shards") {
  const auto d = source_dir() / "models/edge_cases" / name;
  return run_cli("check " + (d / "spec.onnx").string() + " " + (d / shards).string());
}

bool says(const CliRun& r, const std::string& words) {
  return r.out.find(words) != std::string::npos;
}

TEST(EdgeCases, MeanOverMoreThan2To24ElementsIsProven) {
  CliRun r = check_case("mean_2p24");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(says(r, "x: [33554434] -> [4]")) << r.out;
}

// Rank outputs that are constants (an initializer, Identity, Transpose, Slice, Split of a
// Constant) are obligations: proven when right, refuted when one element differs, with and
// without reduction.
TEST(EdgeCases, ConstantOutputsAreObligations) {
  for (const std::string flags : {"", " --no-reduce"}) {
    CliRun ok = check_case("const_outputs", "shards" + flags);
    EXPECT_EQ(ok.exit_code, 0) << ok.out;
    CliRun bad = check_case("const_outputs", "shards_wrong" + flags);
    EXPECT_EQ(bad.exit_code, 1) << bad.out;
    EXPECT_TRUE(says(bad, "spec = 5, plan = 7")) << bad.out;
  }
}

TEST(EdgeCases, ConstantTableOutputOverAReducedDimension) {
  CliRun ok = check_case("const_table_outputs");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_TRUE(says(ok, "x: [4] -> [2]")) << ok.out;
  CliRun bad = check_case("const_table_outputs", "shards_wrong");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
}

TEST(EdgeCases, EmptyReshapeWithAllowzeroProves) {
  CliRun r = check_case("reshape_allowzero");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// Undefined over the reals at every point, on inputs too large for a full-size check: an input
// error naming the file and node (plan-format section 1), not UNKNOWN.
TEST(EdgeCases, UndefinedValueIsAnInputErrorNamingTheNode) {
  const std::pair<const char*, const char*> cases[] = {
      {"nan_log", "Log node '/bad/Log'"},
      {"nan_zero_inf", "Mul node '/bad/Mul'"},
      {"nan_const", "initializer 'nan'"}};
  for (const auto& [name, node] : cases) {
    CliRun r = check_case(name);
    EXPECT_EQ(r.exit_code, 2) << name << ":\n" << r.out;
    EXPECT_TRUE(says(r, node)) << r.out;
    EXPECT_TRUE(says(r, "rank0.onnx")) << r.out;
  }
}

// relu(x) - relu(-x) is x, by cases on the sign of x; relu(x) + relu(-x) is not, and is
// refuted with a witness.
TEST(EdgeCases, ReluDifferenceProvenByCases) {
  for (const std::string flags : {"", " --no-reduce"}) {
    CliRun ok = check_case("relu_odd", "shards" + flags);
    EXPECT_EQ(ok.exit_code, 0) << ok.out;
    CliRun bad = check_case("relu_odd", "shards_wrong" + flags);
    EXPECT_EQ(bad.exit_code, 1) << bad.out;
    EXPECT_TRUE(says(bad, "witness:")) << bad.out;
  }
}

// An AllGather of pieces of different sizes (rows 0-1 and 2-5) is valid: proven at full size,
// with the reason reduction was not applied (it once failed an assertion tying the two sizes,
// exit 4); gathered in the wrong order, refuted at the gather, in both modes.
TEST(EdgeCases, UnevenAllGatherIsProvenAtFullSize) {
  CliRun ok = check_case("uneven_gather");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_TRUE(says(ok, "the members' inputs differ in size along axis 0")) << ok.out;
  for (const std::string flags : {"", " --no-reduce"}) {
    CliRun bad = check_case("uneven_gather", "shards_wrong" + flags);
    EXPECT_EQ(bad.exit_code, 1) << bad.out;
    EXPECT_TRUE(says(bad, "/allgather [AllGather]")) << bad.out;
  }
}

// Data parallelism whose gradients are all-reduced through one flat bucket, as DDP does it
// (exported from PyTorch by tools/examples/make_torch_cases.py): shape reduction met a factor
// it had split earlier in the same unification and failed an assertion (exit 4). Proven in
// both modes; the bucket divided by 4 instead of 2 is refuted in both.
TEST(EdgeCases, FlatGradientBucketIsChecked) {
  for (const std::string flags : {"", " --no-reduce"}) {
    CliRun ok = check_case("flat_bucket", "shards" + flags);
    EXPECT_EQ(ok.exit_code, 0) << ok.out;
    CliRun bad = check_case("flat_bucket", "shards_wrong" + flags);
    EXPECT_EQ(bad.exit_code, 1) << bad.out;
  }
}

// An instance over --max-elements names the first ten reasons it keeps dimensions whole and
// counts the rest (a real plan has one per rank and micro-batch, thousands of lines).
TEST(EdgeCases, ATooLargeInstanceListsTenReasons) {
  CliRun r = check_case("many_kept", "shards --max-elements 10 --no-progress");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  const std::string message = r.out.substr(0, r.out.find("shape reduction:"));
  size_t lines = 0;
  for (size_t at = message.find("concatenates along it"); at != std::string::npos;
       at = message.find("concatenates along it", at + 1))
    ++lines;
  EXPECT_EQ(lines, 10u) << message;
  EXPECT_TRUE(says(r, "(24 reasons in all; --json lists them)")) << r.out;
  EXPECT_EQ(check_case("many_kept", "shards --no-progress").exit_code, 0);
}

}  // namespace
}  // namespace onnx_tv::e2e
