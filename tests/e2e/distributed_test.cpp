// `mpirun --oversubscribe -n 3 onnx-tv check` (docs/distributed.md): the processes share the
// instances, process 0 writes the report one process writes, and the run exits with the
// verdict's code, on a correct plan and on a wrong one.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

using nlohmann::json;

std::filesystem::path generate(const std::string& bug) {
  const auto dir = fresh_dir("distributed_" + (bug.empty() ? std::string("ok") : bug));
  EXPECT_TRUE(generate_zoo("--small-plan dp4_pp2_mb4" + (bug.empty() ? "" : " --bug " + bug), dir));
  return dir;
}

// Open MPI refuses root unless told (CI runs as root); more processes than cores need
// --oversubscribe.
CliRun mpirun(int n, const std::string& args) {
  return run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
                     "--oversubscribe -n " + std::to_string(n) + " " + binary() + " " + args);
}

json read(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) {
    ADD_FAILURE() << "no report " << p;
    return json::object();
  }
  return json::parse(in);
}

// The report without its time and how many processes made it.
json shown(json j) {
  j["stats"].erase("seconds");
  j["stats"].erase("processes");
  j["stats"].erase("process_instances");
  return j;
}

void same_as_one_process(const std::string& bug, int exit_code, const json& instances) {
  const auto dir = generate(bug);
  const std::string args = (dir / "spec.onnx").string() + " " + (dir / "plan").string() +
                           " --no-progress --json ";
  const CliRun one = run_cli("check " + args + (dir / "one.json").string());
  ASSERT_EQ(one.exit_code, exit_code) << one.out;
  const CliRun three = mpirun(3, "check " + args + (dir / "three.json").string());
  EXPECT_EQ(three.exit_code, exit_code) << three.out;
  const json a = read(dir / "one.json"), b = read(dir / "three.json");
  EXPECT_EQ(shown(a), shown(b));
  EXPECT_EQ(b["stats"]["processes"], 3);
  EXPECT_EQ(b["stats"]["process_instances"], instances);
  // One report, from process 0: the verdict line once.
  const std::string verdict = a["verdict"].get<std::string>() + "\n";
  EXPECT_EQ(three.out.find(verdict), three.out.rfind(verdict)) << three.out;
  EXPECT_NE(three.out.find("3 processes proved"), std::string::npos) << three.out;
}

TEST(Distributed, ThreeProcessesProveACorrectPlanAsOneDoes) {
  same_as_one_process("", 0, json{2, 1, 1});
}

TEST(Distributed, ThreeProcessesRefuteAWrongPlanAsOneDoes) {
  same_as_one_process("dp_average_half", 1, json{1, 1, 1});
}

// An input error is found by every process alike, before any instance: one message, exit 2.
TEST(Distributed, AnInputErrorEndsEveryProcess) {
  const auto dir = fresh_dir("distributed_missing");
  const CliRun r = mpirun(3, "check " + (dir / "spec.onnx").string() + " " + dir.string() +
                                 " --no-progress");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const std::string head = "INPUT ERROR\n";
  EXPECT_NE(r.out.find(head), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(head), r.out.rfind(head)) << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
