// The faults found by fuzzing, through the binary as a user meets them: each ends with exit 2
// and a message naming the file, and the --json report is written and is valid JSON whatever
// bytes the input's names hold.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "sections.h"

namespace fs = std::filesystem;

namespace onnx_tv::e2e {
namespace {

// The bundled example copied to a fresh folder, to be broken.
struct Case {
  fs::path dir;
  fs::path shards() const { return dir / "shards"; }
  fs::path report() const { return dir / "report.json"; }
  CliRun run() const {
    fs::remove(report());
    return run_cli("check " + (dir / "spec.onnx").string() + " " + shards().string() +
                   " --no-progress --json " + report().string());
  }
  // The report, parsed; fails the test when it is missing or not JSON.
  nlohmann::json json() const {
    std::ifstream in(report());
    EXPECT_TRUE(in.good()) << "no report at " << report();
    try {
      return nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the report is not JSON: " << e.what();
      return {};
    }
  }
  onnx::ModelProto rank(int r) const {
    onnx::ModelProto m;
    std::ifstream in(shards() / ("rank" + std::to_string(r) + ".onnx"), std::ios::binary);
    EXPECT_TRUE(m.ParseFromIstream(&in));
    return m;
  }
  void save(int r, const onnx::ModelProto& m) const {
    std::ofstream out(shards() / ("rank" + std::to_string(r) + ".onnx"), std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  void set_plan(const std::string& text) const { std::ofstream(shards() / "plan.json") << text; }
};

Case copy_example(const std::string& name) {
  Case c{fresh_dir("hostile_" + name)};
  fs::copy(source_dir() / "models/examples/mlp_tp2/spec.onnx", c.dir / "spec.onnx");
  fs::copy(source_dir() / "models/examples/mlp_tp2/shards", c.shards());
  return c;
}

void expect_exit(const CliRun& r, int code, std::initializer_list<std::string> words) {
  EXPECT_EQ(r.exit_code, code) << r.out;
  for (const auto& w : words) EXPECT_NE(r.out.find(w), std::string::npos) << "'" << w << "' not in:\n" << r.out;
}

TEST(HostileInputs, PlanJsonNested100000Deep) {
  Case c = copy_example("deep");
  c.set_plan("{\"world_size\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  expect_exit(c.run(), 2, {"plan.json", "nest more than 64 levels"});
  EXPECT_EQ(c.json()["exit_code"], 2);
}

TEST(HostileInputs, WorldSize2To31) {
  Case c = copy_example("world");
  nlohmann::json plan;
  std::ifstream(c.shards() / "plan.json") >> plan;
  plan["world_size"] = int64_t(1) << 31;
  c.set_plan(plan.dump());
  const auto start = std::chrono::steady_clock::now();
  expect_exit(c.run(), 2, {"plan.json world_size", "2147483648"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(c.json()["exit_code"], 2);
}

TEST(HostileInputs, RankProgramIsDevZeroOrAFifo) {
  Case c = copy_example("devzero");
  fs::remove(c.shards() / "rank1.onnx");
  fs::create_symlink("/dev/zero", c.shards() / "rank1.onnx");
  expect_exit(c.run(), 2, {"rank1.onnx", "character device"});
  fs::remove(c.shards() / "rank1.onnx");
  ASSERT_EQ(mkfifo((c.shards() / "rank1.onnx").c_str(), 0600), 0);
  expect_exit(c.run(), 2, {"rank1.onnx", "FIFO"});
  EXPECT_EQ(c.json()["exit_code"], 2);
}

TEST(HostileInputs, NameThatIsNotUtf8InAnError) {
  Case c = copy_example("utf8_error");
  onnx::ModelProto m = c.rank(1);
  auto* v = m.mutable_graph()->add_input();  // an unbound input: an input error names it
  *v = m.graph().input(0);
  v->set_name("q\xff");
  c.save(1, m);
  // Exit 4 and an empty report before: the JSON writer threw on the name.
  expect_exit(c.run(), 2, {"'q\\xff'", "rank1.onnx"});
  EXPECT_EQ(c.json()["exit_code"], 2);
  EXPECT_NE(c.json()["message"].get<std::string>().find("'q\\xff'"), std::string::npos);
}

TEST(HostileInputs, NameThatIsNotUtf8InAWarning) {
  Case c = copy_example("utf8_warning");
  onnx::ModelProto m = c.rank(1);
  // An extra output no binding names: a warning quotes it, and the plan is still proven.
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Identity");
  n->add_input(m.graph().input(0).name());
  n->add_output("extra\xfe\x1b");
  auto* out = m.mutable_graph()->add_output();
  *out = m.graph().input(0);
  out->set_name("extra\xfe\x1b");
  c.save(1, m);
  const CliRun r = c.run();
  expect_exit(r, 0, {"extra\\xfe\\x1b"});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a terminal escape was printed";
  const nlohmann::json j = c.json();
  EXPECT_EQ(j["exit_code"], 0);
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_NE(j["warnings"][0].get<std::string>().find("extra\\xfe\\x1b"), std::string::npos);
}

TEST(HostileInputs, NameThatIsNotUtf8InEval) {
  const fs::path dir = fresh_dir("hostile_eval");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  for (auto [list, name] : {std::pair{m.mutable_graph()->mutable_input(), "x\xff"},
                            {m.mutable_graph()->mutable_output(), "y\xfe\x1b"}}) {
    auto* v = list->Add();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  }
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Neg");
  n->add_input("x\xff");
  n->add_output("y\xfe\x1b");
  std::ofstream(dir / "m.onnx", std::ios::binary) << m.SerializeAsString();
  fs::create_directories(dir / "in");
  onnx::TensorProto t;
  t.set_name("x\xff");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(1);
  t.add_float_data(2);
  std::ofstream(dir / "in/input_0.pb", std::ios::binary) << t.SerializeAsString();
  const CliRun r = run_cli("eval " + (dir / "m.onnx").string() + " --inputs " + (dir / "in").string());
  expect_exit(r, 0, {"y\\xfe\\x1b: float [1]", "-2"});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a terminal escape was printed";
}

// The check crashers kept by the fuzzer, through the binary: whatever each ends in (a verdict,
// an input error, or exit 4 while its fix is open), the --json report is written and says the
// exit code the process gave. Exit 4 left an empty report before.
TEST(HostileInputs, EveryKeptCheckCrasherLeavesAReport) {
  const fs::path kept = source_dir() / "fuzz/regressions/check";
  std::string open_list;
  {
    std::ifstream in(source_dir() / "fuzz/regressions/open.txt");
    open_list.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  int reports = 0;
  for (const auto& entry : fs::directory_iterator(kept)) {
    const std::string name = entry.path().filename().string();
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Case c{fresh_dir("crasher_" + name)};
    fs::create_directories(c.shards());
    for (const fuzz::Section& s : fuzz::split_sections(data, 6)) {
      std::ofstream(s.name == "spec.onnx" ? c.dir / s.name : c.shards() / s.name, std::ios::binary)
          << s.bytes;
    }
    const CliRun r = c.run();
    // A shell reports a process killed by signal n as 128 + n.
    const bool killed = r.exit_code < 0 || r.exit_code > 128;
    if (killed && open_list.find("check/" + name + " ") != std::string::npos) continue;
    SCOPED_TRACE(name);
    ASSERT_FALSE(killed) << "killed by a signal:\n" << r.out;
    EXPECT_LE(r.exit_code, 4) << r.out;
    const nlohmann::json j = c.json();
    EXPECT_EQ(j["exit_code"], r.exit_code);
    if (r.exit_code == 4) EXPECT_EQ(j["verdict"], "INTERNAL ERROR");
    ++reports;
  }
  EXPECT_GT(reports, 0);
}

}  // namespace
}  // namespace onnx_tv::e2e
