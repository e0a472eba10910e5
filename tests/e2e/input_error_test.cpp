// Broken plans, derived from the bundled example, must give exit code 2 (or 3 for what onnx-tv
// does not model) with a message naming the file and the value, never a crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "example_copy.h"
#include "run_cli.h"

namespace fs = std::filesystem;

namespace onnx_tv::e2e {
namespace {

void expect_error(const CliRun& r, int code, std::initializer_list<std::string> words) {
  EXPECT_EQ(r.exit_code, code) << r.out;
  for (const auto& w : words) EXPECT_NE(r.out.find(w), std::string::npos) << "'" << w << "' not in:\n" << r.out;
}

TEST(InputErrors, MissingRankFile) {
  ExampleCopy c = copy_example("missing_rank");
  fs::remove(c.shards() / "rank1.onnx");
  expect_error(c.run(), 2, {"rank1.onnx"});
}

TEST(InputErrors, GarbageModel) {
  ExampleCopy c = copy_example("garbage");
  std::ofstream(c.shards() / "rank1.onnx") << "this is not an onnx model";
  expect_error(c.run(), 2, {"rank1.onnx"});
}

TEST(InputErrors, UnknownKeyInPlan) {
  ExampleCopy c = copy_example("unknown_key");
  auto j = c.plan();
  j["wolrd_size"] = 2;
  c.set_plan(j);
  expect_error(c.run(), 2, {"wolrd_size"});
}

TEST(InputErrors, UnboundRankInput) {
  ExampleCopy c = copy_example("unbound");
  auto j = c.plan();
  auto& b = j["bindings"];
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i]["rank"] == 1 && b[i]["value"] == "x") b.erase(i);
  c.set_plan(j);
  expect_error(c.run(), 2, {"'x'", "rank1.onnx"});
}

TEST(InputErrors, UncoveredSpecOutput) {
  ExampleCopy c = copy_example("uncovered");
  auto j = c.plan();
  auto& b = j["bindings"];
  for (size_t i = b.size(); i-- > 0;)
    if (b[i]["value"] == "y") b.erase(i);
  c.set_plan(j);
  CliRun r = c.run();
  expect_error(r, 2, {"'y'", "not covered"});
}

TEST(InputErrors, SliceOutOfRange) {
  ExampleCopy c = copy_example("slice_range");
  auto j = c.plan();
  for (auto& b : j["bindings"])
    if (b["rank"] == 1 && b["value"] == "w1_shard") b["slice"] = {nullptr, {12, 20}};
  c.set_plan(j);
  expect_error(c.run(), 2, {"w1_shard"});
}

TEST(InputErrors, SliceShapeMismatch) {
  ExampleCopy c = copy_example("slice_shape");
  auto j = c.plan();
  for (auto& b : j["bindings"])
    if (b["rank"] == 1 && b["value"] == "w1_shard") b["slice"] = {nullptr, {0, 4}};
  c.set_plan(j);
  expect_error(c.run(), 2, {"w1_shard", "rank1.onnx"});
}

// An output bound to a region of another shape: exit 2 naming the binding in both modes (shape
// reduction tied the two and failed an assertion, exit 4).
TEST(InputErrors, OutputRegionShapeMismatch) {
  ExampleCopy c = copy_example("output_region_shape");
  auto j = c.plan();
  for (auto& b : j["bindings"])
    if (b["rank"] == 1 && b["value"] == "y") b["slice"] = {{0, 2}, nullptr};
  c.set_plan(j);
  expect_error(c.run(), 2, {"bindings[7]", "'y'", "rank1.onnx", "[2, 8]"});
  expect_error(run_cli("check " + c.spec().string() + " " + c.shards().string() + " --no-reduce"),
               2, {"bindings[7]", "[2, 8]"});
}

TEST(InputErrors, DuplicateBinding) {
  ExampleCopy c = copy_example("duplicate");
  auto j = c.plan();
  j["bindings"].push_back(j["bindings"][0]);
  c.set_plan(j);
  expect_error(c.run(), 2, {"'x'"});
}

TEST(InputErrors, CollectiveWithoutPartner) {
  ExampleCopy c = copy_example("unmatched_collective");
  auto m = c.model(c.shards() / "rank1.onnx");
  auto* g = m.mutable_graph();
  // Drop rank 1's all-reduce and output its partial sum instead.
  for (int i = 0; i < g->node_size(); ++i)
    if (g->node(i).op_type() == "AllReduce") g->mutable_node()->DeleteSubrange(i, 1);
  g->mutable_output(0)->set_name("y_partial");
  c.save(m, c.shards() / "rank1.onnx");
  auto j = c.plan();
  for (auto& b : j["bindings"])
    if (b["rank"] == 1 && b["value"] == "y") b["value"] = "y_partial";
  c.set_plan(j);
  expect_error(c.run(), 2, {"AllReduce", "/fc2/AllReduce", "rank 1", "[0, 1]"});
}

// Two keyed all-reduces per rank; rank 1 issues them in the other order.
TEST(InputErrors, CollectivesInDifferentOrder) {
  ExampleCopy c = copy_example("collective_order");
  for (int r = 0; r < 2; ++r) {
    auto path = c.shards() / ("rank" + std::to_string(r) + ".onnx");
    auto m = c.model(path);
    auto* g = m.mutable_graph();
    onnx::NodeProto* ar = nullptr;
    for (auto& n : *g->mutable_node())
      if (n.op_type() == "AllReduce") ar = &n;
    ASSERT_NE(ar, nullptr);
    onnx::NodeProto first = *ar, second = *ar;
    first.set_name("/extra/AllReduce");
    first.set_output(0, "y_extra");
    auto* key = first.add_attribute();
    key->set_name("key");
    key->set_type(onnx::AttributeProto::STRING);
    key->set_s("extra");
    auto* key2 = second.add_attribute();
    key2->set_name("key");
    key2->set_type(onnx::AttributeProto::STRING);
    key2->set_s("main");
    g->mutable_node()->RemoveLast();
    *g->add_node() = r == 0 ? first : second;
    *g->add_node() = r == 0 ? second : first;
    c.save(m, path);
  }
  expect_error(c.run(), 2, {"different order", "extra", "main", "rank 1"});
}

TEST(InputErrors, DeclaredShapeContradicted) {
  ExampleCopy c = copy_example("declared_shape");
  auto m = c.model(c.spec());
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(1)->set_dim_value(9);
  c.save(m, c.spec());
  expect_error(c.run(), 2, {"'y'", "[4, 8]"});
}

TEST(InputErrors, SendWithoutRecv) {
  ExampleCopy c = copy_example("send_alone");
  auto path = c.shards() / "rank0.onnx";
  auto m = c.model(path);
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Send");
  n->set_domain("onnx_tv");
  n->set_name("/stray/Send");
  n->add_input("x");
  auto* peer = n->add_attribute();
  peer->set_name("peer");
  peer->set_type(onnx::AttributeProto::INT);
  peer->set_i(1);
  c.save(m, path);
  expect_error(c.run(), 2, {"/stray/Send", "no matching Recv", "rank 1"});
}

TEST(InputErrors, UnsupportedOperatorIsUnknown) {
  ExampleCopy c = copy_example("unsupported");
  auto m = c.model(c.spec());
  m.mutable_graph()->mutable_node(1)->set_op_type("HardSigmoid");
  c.save(m, c.spec());
  expect_error(c.run(), 3, {"HardSigmoid", "/act/Sigmoid"});
}

TEST(InputErrors, NaNConstantNamesTheNode) {
  ExampleCopy c = copy_example("nan");
  auto m = c.model(c.spec());
  auto* g = m.mutable_graph();
  auto* node = g->add_node();
  node->set_op_type("Constant");
  node->set_name("/bad/Constant");
  node->add_output("bad_c");
  auto* a = node->add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(std::numeric_limits<float>::quiet_NaN());
  auto* mul = g->add_node();
  mul->set_op_type("Mul");
  mul->set_name("/bad/Mul");
  mul->add_input("y");
  mul->add_input("bad_c");
  mul->add_output("y_bad");
  c.save(m, c.spec());
  expect_error(c.run(), 2, {"/bad/Constant", "NaN"});
}

}  // namespace
}  // namespace onnx_tv::e2e
