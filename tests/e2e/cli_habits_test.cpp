// What a command-line user expects of onnx-tv besides the proof: help and version, options
// that refuse another option as their value, clear words when the plan has no bindings, and
// hints where a plan written by hand or by an exporter commonly goes wrong.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace fs = std::filesystem;

namespace onnx_tv::e2e {
namespace {

std::string example(const std::string& part) {
  return (source_dir() / "models/examples/mlp_tp2" / part).string();
}

bool has(const CliRun& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

TEST(CliHabits, HelpExitsZero) {
  for (const char* args : {"check --help", "check -h", "check a b --help", "--help", "-h",
                           "eval --help", "conformance -h"}) {
    CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    EXPECT_TRUE(has(r, "usage: onnx-tv")) << args << "\n" << r.out;
  }
}

TEST(CliHabits, VersionExitsZero) {
  for (const char* args : {"--version", "check --version"}) {
    CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("onnx-tv ", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line:\n" << r.out;
    EXPECT_GT(r.out.size(), std::string("onnx-tv \n").size()) << r.out;
  }
}

// "--json --no-reduce" once wrote the report to a file named --no-reduce and checked at full
// size; every option with a value now refuses one that is an option, naming itself.
TEST(CliHabits, OptionValueIsNotAnOption) {
  const fs::path dir = fresh_dir("option_value");
  const std::string check = "check " + example("spec.onnx") + " " + example("shards");
  // Run from `dir`, where a file named --no-reduce would appear.
  const std::string cmd = "cd " + dir.string() + " && " + ONNX_TV_BINARY + " " + check +
                          " --json --no-reduce > out.txt 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_FALSE(fs::exists(dir / "--no-reduce"));
  std::ifstream in(dir / "out.txt");
  const std::string out((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(out.find("--json needs a file name, not the option '--no-reduce'"), std::string::npos)
      << out;

  for (const char* opt : {"--json", "--seed", "--max-elements", "--max-memory", "--jobs"}) {
    CliRun o = run_cli(check + " " + opt + " --no-stages");
    EXPECT_EQ(o.exit_code, 2) << opt << "\n" << o.out;
    EXPECT_TRUE(has(o, std::string(opt) + " needs")) << o.out;
    EXPECT_TRUE(has(o, "'--no-stages'")) << o.out;
  }
  for (const char* args : {"eval m.onnx --inputs --out o", "eval m.onnx --inputs in --expected --out o",
                           "eval m.onnx --inputs in --out --expected e", "conformance --table --x"}) {
    CliRun o = run_cli(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.out;
    EXPECT_TRUE(has(o, "needs a")) << o.out;
    EXPECT_TRUE(has(o, "not the option")) << o.out;
  }
}

}  // namespace
}  // namespace onnx_tv::e2e
