// evaluate() on small graphs, tensor files, and the `onnx-tv eval` command on ONNX test data.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "eval/conformance.h"
#include "eval/eval.h"
#include "frontend/tensor_file.h"
#include "../e2e/run_cli.h"

namespace onnx_tv::eval {
namespace {

ir::Graph unary_graph(const std::string& op) {
  ir::Graph g;
  g.file = "unary.onnx";
  g.opsets[""] = 17;
  g.inputs.push_back({"x", ir::DType::Float, std::nullopt});
  g.outputs.push_back({"y", ir::DType::Float, std::nullopt});
  ir::Node n;
  n.op_type = op;
  n.opset = 17;
  n.inputs = {"x"};
  n.outputs = {"y"};
  g.nodes.push_back(n);
  return g;
}

InputTensor floats(std::vector<double> v) {
  return {"x", {ir::DType::Float, {int64_t(v.size())}, std::move(v), {}}};
}

TEST(Evaluate, PolynomialResultsAreExactOthersNumeric) {
  auto neg = evaluate(unary_graph("Neg"), {floats({0.1f})});
  ASSERT_EQ(neg.size(), 1u);
  EXPECT_TRUE(neg[0].exact[0]);
  EXPECT_EQ(neg[0].values[0], -0.1L);  // 0.1f means 1/10: exact, not the float's value
  auto sin = evaluate(unary_graph("Sin"), {floats({0, 0.5})});
  EXPECT_TRUE(sin[0].exact[0]);
  EXPECT_FALSE(sin[0].exact[1]);
  EXPECT_NEAR(double(sin[0].values[1]), std::sin(0.5), 1e-15);
}

TEST(Evaluate, UnsupportedOpIsNamedBeforeAndWhileRunning) {
  ir::Graph g = unary_graph("Det");
  EXPECT_NE(first_unsupported_op(g).find("op 'Det'"), std::string::npos);
  EXPECT_EQ(first_unsupported_op(unary_graph("Cos")), "");
  EXPECT_THROW(evaluate(g, {floats({1})}), Unsupported);
}

TEST(Evaluate, InputsMustMatchTheGraph) {
  ir::Graph g = unary_graph("Neg");
  EXPECT_THROW(evaluate(g, {}), InputError);
  InputTensor ints{"x", {ir::DType::Int64, {1}, {}, {1}}};
  EXPECT_THROW(evaluate(g, {ints}), InputError);
  InputTensor nan = floats({std::nan("")});
  EXPECT_THROW(evaluate(g, {nan}), InputError);  // NaN is undefined over the reals
}

TEST(TensorFile, RoundTripKeepsTypeShapeNameAndValues) {
  auto dir = std::filesystem::temp_directory_path() / "onnx_tv_tensor_file_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.pb").string();
  ir::ConstTensor t{ir::DType::Float16, {2}, {1.5, -0.25}, {}};
  frontend::save_tensor_file(path, "h", t);
  frontend::NamedTensor back = frontend::load_tensor_file(path);
  EXPECT_EQ(back.name, "h");
  EXPECT_EQ(back.tensor.dtype, ir::DType::Float16);
  EXPECT_EQ(back.tensor.reals, t.reals);
  EXPECT_THROW(frontend::load_tensor_file((dir / "missing.pb").string()), InputError);
}

// ---- the command ----

using onnx_tv::e2e::CliRun;
using onnx_tv::e2e::run_cli;

std::string node_test(const std::string& name) {
  return std::string(kDefaultTestData) + "/data/node/" + name;
}

class EvalCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(node_test("test_softmax_example")))
      GTEST_SKIP() << "ONNX test data missing (libonnx-testdata)";
  }
};

TEST_F(EvalCommand, MatchesExpectedOutputs) {
  const std::string t = node_test("test_softmax_example");
  CliRun r = run_cli("eval " + t + "/model.onnx --inputs " + t + "/test_data_set_0 --expected " +
                     t + "/test_data_set_0");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("matches"), std::string::npos) << r.out;
}

TEST_F(EvalCommand, PrintsAndWritesOutputsThatReadBack) {
  const std::string t = node_test("test_softmax_example");
  auto out = std::filesystem::temp_directory_path() / "onnx_tv_eval_out";
  std::filesystem::remove_all(out);
  CliRun r = run_cli("eval " + t + "/model.onnx --inputs " + t + "/test_data_set_0 --out " +
                     out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("y: float [1, 3]"), std::string::npos) << r.out;
  CliRun back = run_cli("eval " + t + "/model.onnx --inputs " + t + "/test_data_set_0 " +
                        "--expected " + out.string());
  EXPECT_EQ(back.exit_code, 0) << back.out;
}

TEST_F(EvalCommand, DifferenceExitsOneWithTheWorstElement) {
  const std::string t = node_test("test_exp_example"), other = node_test("test_sigmoid_example");
  CliRun r = run_cli("eval " + t + "/model.onnx --inputs " + t + "/test_data_set_0 --expected " +
                     other + "/test_data_set_0");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("worst at [2]: got 2.71828183, expected 0.731058598"), std::string::npos)
      << r.out;
}

TEST_F(EvalCommand, UnsupportedOpIsUnknownAndUsageErrorsExitTwo) {
  const std::string t = node_test("test_det_2d");
  CliRun r = run_cli("eval " + t + "/model.onnx --inputs " + t + "/test_data_set_0");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("UNKNOWN: op 'Det'"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("eval " + t + "/model.onnx").exit_code, 2);
  EXPECT_EQ(run_cli("eval /nonexistent.onnx --inputs /tmp").exit_code, 2);
  EXPECT_EQ(run_cli("conformance /nonexistent").exit_code, 2);
}

}  // namespace
}  // namespace onnx_tv::eval
