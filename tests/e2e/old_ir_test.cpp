// Models of IR versions 3 to 6 are read as specs and as rank programs, with the meaning their
// opset imports give their ops: ONNX's own backend test models (Debian's libonnx-testdata),
// each checked against itself as a one-rank plan, and models/edge_cases/ir3..ir6.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace fs = std::filesystem;

namespace onnx_tv::e2e {
namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

// A one-rank plan running `model` itself: every graph input without an initializer and every
// graph output bound whole.
void write_self_plan(const fs::path& model, const fs::path& shards) {
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in)) << model;
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  nlohmann::json bindings = nlohmann::json::array();
  for (const auto& vi : m.graph().input())
    if (!inits.count(vi.name())) bindings.push_back({{"value", vi.name()}, {"spec", vi.name()}});
  for (const auto& vi : m.graph().output())
    bindings.push_back({{"value", vi.name()}, {"spec", vi.name()}});
  auto* p = m.add_metadata_props();
  p->set_key("onnx_tv.bindings");
  p->set_value(bindings.dump());
  fs::create_directories(shards);
  std::ofstream out(shards / "rank0.onnx", std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

class BackendModel : public ::testing::TestWithParam<const char*> {};

TEST_P(BackendModel, OldIrModelProvesAgainstItself) {
  const fs::path model = kTestData / GetParam() / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is not installed (libonnx-testdata)";
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  EXPECT_LE(m.ir_version(), 6);  // the point of the test
  std::string name = GetParam();
  std::replace(name.begin(), name.end(), '/', '_');
  const fs::path shards = fresh_dir("old_ir_" + name) / "shards";
  write_self_plan(model, shards);
  CliRun r = run_cli("check " + model.string() + " " + shards.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    LibonnxTestdata, BackendModel,
    ::testing::Values("pytorch-converted/test_Linear", "pytorch-converted/test_Linear_no_bias",
                      "pytorch-converted/test_Softmax", "pytorch-converted/test_LogSoftmax",
                      "pytorch-converted/test_Softmin", "pytorch-converted/test_ReLU",
                      "pytorch-converted/test_PixelShuffle"),
    [](const auto& info) {
      std::string n = info.param;
      return n.substr(n.find('/') + 1);
    });

TEST(OldIr, TensorParallelPlanOfEachVersionProves) {
  for (const char* c : {"ir3", "ir4", "ir5", "ir6"}) {
    const fs::path d = source_dir() / "models/edge_cases" / c;
    CliRun r = run_cli("check " + (d / "spec.onnx").string() + " " + (d / "shards").string());
    EXPECT_EQ(r.exit_code, 0) << c << ":\n" << r.out;
  }
}

// Relu of opset 5 (Relu-1) is not modeled: a clear UNKNOWN naming op and opset, never another
// version's meaning.
TEST(OldIr, OpVersionNotModeledIsUnknown) {
  const fs::path d = source_dir() / "models/edge_cases/ir3_opset5";
  CliRun r = run_cli("check " + (d / "spec.onnx").string() + " " + (d / "shards").string());
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("'Relu' (domain 'ai.onnx', opset 5) is not supported"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
