// Fewer ranks along a mesh axis (reduce/mesh_axes.h): small plans with four ranks along an
// axis (tools/zoo/generate.py --small-plan), checked with two and three, and with all four
// (--no-reduce).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

using nlohmann::json;

// Generates a named small plan (with a generator-level edit) into a fresh folder.
std::filesystem::path generate(const std::string& plan, const std::string& extra = "") {
  std::string name = "fewer_ranks_" + plan + extra;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  const auto dir = fresh_dir(name);
  EXPECT_TRUE(generate_zoo("--small-plan " + plan + " " + extra, dir)) << plan << " " << extra;
  return dir;
}

json check(const std::filesystem::path& dir, const std::string& flags = "") {
  const auto report = dir / ("report" + std::to_string(flags.size()) + ".json");
  CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / "plan").string() +
                     " --no-progress --json " + report.string() + " " + flags);
  std::ifstream in(report);
  if (!in) {
    ADD_FAILURE() << "no report: " << r.out;
    return json::object();
  }
  return json::parse(in);
}

std::string joined(const json& list) {
  std::string out;
  for (const auto& s : list) out += s.get<std::string>() + "\n";
  return out;
}

// Proven with 2 and with 3 ranks per axis; the summary's ranks are the last instance's.
TEST(FewerRanks, CorrectPlansProveWithTwoAndThreeRanksPerAxis) {
  const struct {
    const char* plan;
    const char* shrunk;
    int ranks;
  } cases[] = {{"dp4_mb2", "mesh axis 'dp': 4 ranks -> 2 and 3", 3},
               {"dp4_tp2_pp2_mb2", "mesh axis 'dp': 4 ranks -> 2 and 3", 12}};
  for (const auto& c : cases) {
    const auto dir = generate(c.plan);
    const json fewer = check(dir);
    EXPECT_EQ(fewer["verdict"], "EQUIVALENT") << c.plan;
    EXPECT_EQ(joined(fewer["reduction"]["fewer_ranks"]), std::string(c.shrunk) + "\n") << c.plan;
    EXPECT_EQ(fewer["stats"]["ranks"], c.ranks) << c.plan;
    EXPECT_EQ(check(dir, "--no-reduce")["verdict"], "EQUIVALENT") << c.plan;
    const json parallel = check(dir, "--jobs 2");  // the instances proven at once
    EXPECT_EQ(parallel["verdict"], "EQUIVALENT") << c.plan;
    EXPECT_EQ(parallel["stats"]["ranks"], c.ranks) << c.plan;
  }
}

// Axes whose count cannot shrink keep all their ranks, with the reason, and the check goes
// on: under sequence parallelism a norm reads the reduce-scattered sum over TP ranks, seen
// before linking (and inference would refuse it too: tests/check/count_grid_test.cpp);
// ZeRO-2 scatters the hidden size that heads split another way, which inference refuses.
TEST(FewerRanks, AxesInferenceRefusesKeepTheirRanks) {
  const struct {
    const char* plan;
    const char* why;
  } cases[] = {{"tp4_sp_mb2", "mesh axis 'tp' keeps its 4 ranks: output binding"},
               {"dp4_zero2_mb2", "mesh axis 'dp' keeps its 4 ranks: another dimension splits"}};
  for (const auto& c : cases) {
    const json r = check(generate(c.plan));
    EXPECT_EQ(r["verdict"], "EQUIVALENT") << c.plan;
    EXPECT_TRUE(r["reduction"]["fewer_ranks"].empty()) << c.plan;
    EXPECT_EQ(r["stats"]["ranks"], 4) << c.plan;
    EXPECT_NE(joined(r["reduction"]["kept_full"]).find(c.why), std::string::npos)
        << c.plan << "\n" << r["reduction"]["kept_full"].dump();
  }
}

// The averaging constant is 1/2 on every one of four data-parallel ranks: wrong at full size,
// and wrong with two ranks (the spec's mean keeps its full-size count).
TEST(FewerRanks, ABugOnEveryRankIsCaughtWithTwo) {
  const auto dir = generate("dp4_mb2", "--bug dp_average_half");
  const json fewer = check(dir);
  EXPECT_EQ(fewer["verdict"], "NOT EQUIVALENT");
  EXPECT_FALSE(fewer["reduction"]["fewer_ranks"].empty());
  const json all = check(dir, "--no-reduce");
  EXPECT_EQ(all["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(fewer["mismatch"]["spec_output"], all["mismatch"]["spec_output"]);
  const json parallel = check(dir, "--jobs 2");
  EXPECT_EQ(parallel["verdict"], "NOT EQUIVALENT");
  EXPECT_EQ(parallel["mismatch"], fewer["mismatch"]);  // the first instance in order decides
}

// Only the last rank is wrong: its program differs, so the axis keeps all four ranks, and the
// report names rank 3.
TEST(FewerRanks, RanksThatDifferKeepTheirAxis) {
  const auto dir = generate("dp4_mb2", "--bug dp_average_half_last_rank");
  const json r = check(dir);
  EXPECT_EQ(r["verdict"], "NOT EQUIVALENT");
  EXPECT_TRUE(r["reduction"]["fewer_ranks"].empty());
  EXPECT_NE(joined(r["reduction"]["kept_full"]).find("ranks 0 and 3 run different programs"),
            std::string::npos)
      << r["reduction"].dump();
  EXPECT_EQ(r["mismatch"]["ranks"], json::array({3}));
}

// The residual is added inside the o_proj all-reduce, a share on each TP rank: a sum that
// counts its ranks. With 1/tp that is right; with 1/2 it is right only on two ranks, which is
// all an instance with fewer ranks would have: the check keeps every rank instead.
// Tensor parallelism with a norm after the all-reduce: the norm is not a polynomial of the sum
// over ranks, so the TP axis keeps its ranks (count_degree.cpp), with the reason.
TEST(FewerRanks, ANormOfASumOverRanksKeepsThem) {
  const json plain = check(generate("tp4_mb2"));
  EXPECT_EQ(plain["verdict"], "EQUIVALENT");
  EXPECT_TRUE(plain["reduction"]["fewer_ranks"].empty());
  EXPECT_NE(joined(plain["reduction"]["kept_full"]).find("mesh axis 'tp' keeps its 4 ranks"),
            std::string::npos)
      << plain["reduction"]["kept_full"].dump();
  const json right = check(generate("tp4_mb2", "--bug tp_residual_folded"));
  EXPECT_EQ(right["verdict"], "EQUIVALENT");
  EXPECT_TRUE(right["reduction"]["fewer_ranks"].empty());
  const json half = check(generate("tp4_mb2", "--bug tp_residual_folded_half"));
  EXPECT_EQ(half["verdict"], "NOT EQUIVALENT");
  EXPECT_TRUE(half["reduction"]["fewer_ranks"].empty());
  const json parallel = check(generate("tp4_mb2", "--bug tp_residual_folded"), "--jobs 2");
  EXPECT_EQ(parallel["verdict"], "EQUIVALENT");
}

}  // namespace
}  // namespace onnx_tv::e2e
