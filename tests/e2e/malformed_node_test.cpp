// Malformed nodes (each of these crashed a dimension rule while --no-reduce rejected it) give
// exit 2 naming the file and the node, the same with and without shape reduction.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "run_cli.h"

namespace fs = std::filesystem;

namespace onnx_tv::e2e {
namespace {

onnx::ModelProto load(const fs::path& p) {
  onnx::ModelProto m;
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << p;
  return m;
}

void save(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
}

void add_ints(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> v, bool scalar = false) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(int64_t(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

void add_float_scalar(onnx::GraphProto& g, const std::string& name) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(2.0f);
}

onnx::NodeProto& add_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                          int outputs = 1) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name("/bad/" + op);
  for (auto& i : in) n->add_input(i);
  for (int k = 0; k < outputs; ++k) n->add_output("bad_out" + std::to_string(k));
  return *n;
}

void int_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ints_attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

struct Malformed {
  std::string name;
  std::function<void(onnx::GraphProto&)> edit;  // adds the bad node to the spec (x is [4, 8])
  std::string says;
};

void PrintTo(const Malformed& m, std::ostream* os) { *os << m.name; }

class MalformedNode : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedNode, IsAnInputErrorInBothModes) {
  const Malformed& m = GetParam();
  const fs::path dir = fresh_dir("malformed_" + m.name);
  fs::copy(source_dir() / "models/examples/mlp_tp2/shards", dir / "shards");
  onnx::ModelProto spec = load(source_dir() / "models/examples/mlp_tp2/spec.onnx");
  m.edit(*spec.mutable_graph());
  save(spec, dir / "spec.onnx");
  const std::string args = "check " + (dir / "spec.onnx").string() + " " + (dir / "shards").string();
  for (const std::string mode : {"", " --no-reduce"}) {
    CliRun r = run_cli(args + mode);
    EXPECT_EQ(r.exit_code, 2) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("spec.onnx"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(m.says), std::string::npos) << "expected '" << m.says << "'\n" << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MalformedNode,
    ::testing::Values(
        Malformed{"concat_axis", [](auto& g) { int_attr(add_node(g, "Concat", {"x", "x"}), "axis", 5); },
                  "/bad/Concat"},
        Malformed{"flatten_axis", [](auto& g) { int_attr(add_node(g, "Flatten", {"x"}), "axis", 9); },
                  "axis 9"},
        Malformed{"gather_axis", [](auto& g) {
                    add_ints(g, "idx", {0});
                    int_attr(add_node(g, "Gather", {"x", "idx"}), "axis", 4);
                  }, "/bad/Gather"},
        Malformed{"gemm_1d_b", [](auto& g) {
                    add_ints(g, "b1", {1, 2, 3, 4, 5, 6, 7, 8});
                    add_node(g, "Gemm", {"x", "b1"});
                  }, "/bad/Gemm"},
        Malformed{"gemm_0d_b", [](auto& g) {
                    add_float_scalar(g, "bad_scalar");
                    add_node(g, "Gemm", {"x", "bad_scalar"});
                  }, "rank 0"},
        Malformed{"layer_norm_axis", [](auto& g) {
                    int_attr(add_node(g, "LayerNormalization", {"x", "x"}), "axis", 7);
                  }, "/bad/LayerNormalization"},
        Malformed{"matmul_scalar", [](auto& g) {
                    add_float_scalar(g, "bad_scalar");
                    add_node(g, "MatMul", {"bad_scalar", "x"});
                  }, "rank 0"},
        Malformed{"reduce_mean_axes", [](auto& g) {
                    ints_attr(add_node(g, "ReduceMean", {"x"}), "axes", {9});
                  }, "/bad/ReduceMean"},
        Malformed{"slice_axes", [](auto& g) {
                    add_ints(g, "s0", {0});
                    add_ints(g, "s1", {2});
                    add_ints(g, "s5", {5});
                    add_node(g, "Slice", {"x", "s0", "s1", "s5"});
                  }, "/bad/Slice"},
        Malformed{"split_sizes", [](auto& g) {
                    add_ints(g, "sizes", {1, 2});
                    add_node(g, "Split", {"x", "sizes"}, 2);
                  }, "do not add up"},
        Malformed{"trilu_1d", [](auto& g) {
                    add_ints(g, "v", {1, 2, 3});
                    add_node(g, "Trilu", {"v"});
                  }, "rank 1"},
        Malformed{"unsqueeze_axes", [](auto& g) {
                    add_ints(g, "a9", {9});
                    add_node(g, "Unsqueeze", {"x", "a9"});
                  }, "/bad/Unsqueeze"},
        Malformed{"transpose_perm", [](auto& g) {
                    ints_attr(add_node(g, "Transpose", {"x"}), "perm", {0, 5});
                  }, "perm"},
        Malformed{"expand_6_to_1x4", [](auto& g) {
                    add_ints(g, "six", {1, 2, 3, 4, 5, 6});
                    add_ints(g, "to", {1, 4});
                    add_node(g, "Expand", {"six", "to"});
                  }, "/bad/Expand"},
        // Found by the structural mutation campaign: the dimension rule read the attribute,
        // validation the (absent) input, and their shapes disagreed (exit 4).
        Malformed{"reduce_sum_axes_attribute", [](auto& g) {
                    ints_attr(add_node(g, "ReduceSum", {"x"}), "axes", {1});
                  }, "has attribute 'axes', which ReduceSum-13 does not take"},
        Malformed{"missing_input_count", [](auto& g) { add_node(g, "Add", {"x"}); },
                  "Add-14 takes 2"},
        Malformed{"mean_of_bool", [](auto& g) {
                    auto* t = g.add_initializer();
                    t->set_name("flags");
                    t->set_data_type(onnx::TensorProto::BOOL);
                    t->add_dims(2);
                    t->add_int32_data(1);
                    t->add_int32_data(0);
                    add_node(g, "ReduceMean", {"flags"});
                  }, "does not take"},
        // Not a node, but what every later phase looks up without guarding.
        Malformed{"output_no_node_defines", [](auto& g) {
                    auto* o = g.add_output();
                    o->set_name("ghost");
                    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
                  }, "'ghost'"},
        Malformed{"input_never_defined", [](auto& g) { add_node(g, "Relu", {"nowhere"}); },
                  "'nowhere'"}),
    [](const auto& info) { return info.param.name; });

// The same at a revision newer than ONNX's library knows (ReduceMean-18, axes an input): the
// model's opset raised to 18 leaves its ReduceMean's axes attribute without meaning.
TEST(MalformedNode, AxesAttributeWhereTheOpsetTakesAnInput) {
  const fs::path dir = fresh_dir("malformed_axes_opset18");
  fs::copy(source_dir() / "models/examples/mlp_tp2/shards", dir / "shards");
  onnx::ModelProto spec = load(source_dir() / "models/examples/mlp_tp2/spec.onnx");
  for (auto& o : *spec.mutable_opset_import())
    if (o.domain().empty()) o.set_version(18);
  ints_attr(add_node(*spec.mutable_graph(), "ReduceMean", {"x"}), "axes", {1});
  save(spec, dir / "spec.onnx");
  const std::string args = "check " + (dir / "spec.onnx").string() + " " + (dir / "shards").string();
  for (const std::string mode : {"", " --no-reduce"}) {
    CliRun r = run_cli(args + mode);
    EXPECT_EQ(r.exit_code, 2) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("ReduceMean at opset 18 takes as input #1"), std::string::npos) << r.out;
  }
}

// A node whose output would outgrow --max-elements ends UNKNOWN naming it, before its kernel
// allocates (a Range of 5e8 elements took gigabytes under --no-reduce).
TEST(Limits, MaxElementsHoldsForEveryNodeUnderNoReduce) {
  const fs::path dir = fresh_dir("limits_big_range");
  fs::copy(source_dir() / "models/examples/mlp_tp2/shards", dir / "shards");
  onnx::ModelProto spec = load(source_dir() / "models/examples/mlp_tp2/spec.onnx");
  auto& g = *spec.mutable_graph();
  add_ints(g, "r0", {0}, true);
  add_ints(g, "r1", {500000000}, true);
  add_ints(g, "r2", {1}, true);
  add_node(g, "Range", {"r0", "r1", "r2"});
  save(spec, dir / "spec.onnx");
  CliRun r = run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / "shards").string() +
                     " --no-reduce --max-elements 100000");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("/bad/Range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--max-elements"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
