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

#include "example_copy.h"
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


// Without any binding the first rank input met was reported "not bound", as if one binding
// were missing; the message now says none was found and where they are written.
TEST(CliHabits, NoBindingsFound) {
  ExampleCopy c = copy_example("no_bindings");
  auto j = c.plan();
  j.erase("bindings");
  c.set_plan(j);
  for (int round = 0; round < 3; ++round) {
    if (round == 1) {
      j["bindings"] = nlohmann::json::array();
      c.set_plan(j);
    }
    if (round == 2) fs::remove(c.shards() / "plan.json");  // the default rank files, no metadata
    CliRun r = c.run();
    EXPECT_EQ(r.exit_code, 2) << round << "\n" << r.out;
    EXPECT_TRUE(has(r, c.shards().string() + ": no bindings found")) << r.out;
    EXPECT_TRUE(has(r, round == 2 ? "there is no plan.json" : "plan.json has none")) << r.out;
    EXPECT_TRUE(has(r, (c.shards() / "plan.json").string() + " under \"bindings\"")) << r.out;
    EXPECT_TRUE(has(r, "metadata_props under the key \"onnx_tv.bindings\"")) << r.out;
    EXPECT_FALSE(has(r, "is not bound")) << r.out;
  }
}

// An AllReduce left in the default domain (or any domain but onnx_tv) is an op the kernels do
// not know: the message says where collectives belong.
TEST(CliHabits, CollectiveOutsideItsDomainHasAHint) {
  for (const std::string domain : {"", "ai.onnx", "my.dist"}) {
    ExampleCopy c = copy_example("collective_domain");
    for (int r = 0; r < 2; ++r) {
      const fs::path path = c.shards() / ("rank" + std::to_string(r) + ".onnx");
      onnx::ModelProto m = c.model(path);
      int changed = 0;
      for (auto& n : *m.mutable_graph()->mutable_node())
        if (n.op_type() == "AllReduce") {
          n.set_domain(domain);
          ++changed;
        }
      ASSERT_EQ(changed, 1);
      if (domain == "my.dist") {
        auto* opset = m.add_opset_import();
        opset->set_domain(domain);
        opset->set_version(1);
      }
      c.save(m, path);
    }
    for (const char* extra : {"", " --no-reduce"}) {
      CliRun r = c.run(extra);
      EXPECT_EQ(r.exit_code, 3) << domain << extra << "\n" << r.out;
      EXPECT_TRUE(has(r, "/fc2/AllReduce")) << r.out;
      EXPECT_TRUE(has(r, "hint: collectives and Send/Recv belong to domain \"onnx_tv\" "
                         "(plan-format section 5), not '" +
                         (domain.empty() ? std::string("ai.onnx") : domain) + "'"))
          << r.out;
    }
  }
  // Not on ops that are simply not modeled.
  CliRun plain = run_cli("check " + example("spec.onnx") + " " + example("shards"));
  EXPECT_FALSE(has(plain, "hint:")) << plain.out;
}

// A spec input exported with a dynamic axis has no size onnx-tv can take: the error names the
// symbolic dimension and says how to give the size.
TEST(CliHabits, SymbolicSpecDimensionHasAHint) {
  ExampleCopy c = copy_example("symbolic_spec_dim");
  onnx::ModelProto m = c.model(c.spec());
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                    ->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch");
  c.save(m, c.spec());
  CliRun r = c.run();
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r, "spec input 'x' has no static shape")) << r.out;
  EXPECT_TRUE(has(r, "dimension 0 ('batch') is symbolic")) << r.out;
  EXPECT_TRUE(has(r, "hint: export the spec with static shapes (no dynamic axes), or give the "
                     "size as the dimension's dim_value"))
      << r.out;

  // Unbound, the spec input fails where the spec's symbols are made, with the same hint.
  ExampleCopy u = copy_example("symbolic_unbound_spec_dim");
  onnx::ModelProto mu = u.model(u.spec());
  auto* g = mu.mutable_graph();
  auto* extra = g->add_input();
  *extra = g->input(0);
  extra->set_name("unused");
  extra->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("");
  extra->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->clear_dim_value();
  u.save(mu, u.spec());
  CliRun ru = u.run();
  EXPECT_EQ(ru.exit_code, 2) << ru.out;
  EXPECT_TRUE(has(ru, "graph input 'unused' has no static shape")) << ru.out;
  EXPECT_TRUE(has(ru, "dimension 1 (no size) is symbolic")) << ru.out;
  EXPECT_TRUE(has(ru, "hint: export the spec with static shapes")) << ru.out;
}

// A rank input's symbolic dimension takes its size from its binding, but shape reduction needs
// it declared: the report says why reduction did not apply and how to have it.
TEST(CliHabits, SymbolicRankDimensionHasAHint) {
  ExampleCopy c = copy_example("symbolic_rank_dim");
  for (int r = 0; r < 2; ++r) {
    const fs::path path = c.shards() / ("rank" + std::to_string(r) + ".onnx");
    onnx::ModelProto m = c.model(path);
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
        ->mutable_dim(0)->set_dim_param("batch");
    c.save(m, path);
  }
  CliRun r = c.run();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has(r, "has a symbolic dimension 'batch'; hint: export the program with static "
                     "shapes"))
      << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
