// load_model / parse_model: conversion of ONNX models to ir::Graph, and the errors on what
// cannot be read.
#include <cmath>
#include <limits>

#include "frontend/model_loader.h"
#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

TEST(ModelLoader, ReadsIr7AndIr10Models) {
  TempDir dir;
  for (int64_t ir : {7, 10}) {
    onnx::ModelProto m = make_model(ir, 13);
    add_input(m, "x", {2, 3});
    add_output(m, "y", {2, 3});
    add_node(m, "Relu", {"x"}, {"y"}, "", "relu0");
    const std::string path = dir.file("ir" + std::to_string(ir) + ".onnx");
    write_model(path, m);
    ir::Graph g = load_model(path);
    EXPECT_EQ(g.ir_version, ir);
    EXPECT_EQ(g.file, path);
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.inputs[0].name, "x");
    EXPECT_EQ(g.inputs[0].dtype, ir::DType::Float);
    ASSERT_TRUE(g.inputs[0].shape.has_value());
    ASSERT_EQ(g.inputs[0].shape->size(), 2u);
    EXPECT_EQ((*g.inputs[0].shape)[1].size, 3);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op_type, "Relu");
    EXPECT_EQ(g.nodes[0].name, "relu0");
    EXPECT_EQ(g.nodes[0].opset, 13);
    EXPECT_EQ(g.opsets.at(""), 13);
  }
}

TEST(ModelLoader, SymbolicDimsAndValueInfo) {
  onnx::ModelProto m = make_model();
  set_value_info(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {-1, 8},
                 {"batch", ""});
  set_value_info(m.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {-1, -1});
  set_value_info(m.mutable_graph()->add_value_info(), "t", onnx::TensorProto::FLOAT16, {2});
  add_node(m, "Identity", {"x"}, {"y"});
  ir::Graph g = parse_model(m.SerializeAsString(), "mem.onnx");
  const auto& dims = *g.inputs[0].shape;
  EXPECT_FALSE(dims[0].size.has_value());
  EXPECT_EQ(dims[0].symbol, "batch");
  EXPECT_EQ(dims[1].size, 8);
  EXPECT_FALSE((*g.outputs[0].shape)[1].size.has_value());
  EXPECT_EQ((*g.outputs[0].shape)[1].symbol, "");
  ASSERT_TRUE(g.value_info.count("t"));
  EXPECT_EQ(g.value_info.at("t").dtype, ir::DType::Float16);
}

TEST(ModelLoader, DomainAiOnnxIsTheDefaultDomain) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  import_domain(m, "ai.onnx", 18);
  import_domain(m, "onnx_tv", 1);
  add_input(m, "x", {2});
  add_output(m, "z", {2});
  add_node(m, "Neg", {"x"}, {"y"}, "ai.onnx");
  add_node(m, "AllReduce", {"y"}, {"z"}, "onnx_tv");
  ir::Graph g = parse_model(m.SerializeAsString(), "m.onnx");
  EXPECT_EQ(g.opsets.at(""), 18);
  EXPECT_EQ(g.nodes[0].domain, "");
  EXPECT_EQ(g.nodes[0].opset, 18);
  EXPECT_EQ(g.nodes[1].domain, "onnx_tv");
  EXPECT_EQ(g.nodes[1].opset, 1);
}

TEST(ModelLoader, Float16AndBFloat16AreDecodedExactly) {
  onnx::ModelProto m = make_model();
  add_output(m, "h", {5}, onnx::TensorProto::FLOAT16);
  auto* h = m.mutable_graph()->add_initializer();
  h->set_name("h");
  h->set_data_type(onnx::TensorProto::FLOAT16);
  h->add_dims(6);
  // 1.0, -2.0, 0.333251953125 (0x3555), smallest subnormal, -inf, 65504 (max)
  for (int bits : {0x3c00, 0xc000, 0x3555, 0x0001, 0xfc00, 0x7bff}) h->add_int32_data(bits);
  auto* b = m.mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::BFLOAT16);
  b->add_dims(3);
  // raw little-endian: 1.0 (0x3f80), -0.5 (0xbf00), 1/3 rounded (0x3eab)
  const unsigned char raw[] = {0x80, 0x3f, 0x00, 0xbf, 0xab, 0x3e};
  b->set_raw_data(std::string(reinterpret_cast<const char*>(raw), sizeof raw));
  ir::Graph g = parse_model(m.SerializeAsString(), "m.onnx");
  const auto& hv = g.initializers.at("h").reals;
  ASSERT_EQ(hv.size(), 6u);
  EXPECT_EQ(hv[0], 1.0);
  EXPECT_EQ(hv[1], -2.0);
  EXPECT_EQ(hv[2], 0.333251953125);
  EXPECT_EQ(hv[3], std::ldexp(1.0, -24));
  EXPECT_EQ(hv[4], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(hv[5], 65504.0);
  const auto& bv = g.initializers.at("b").reals;
  ASSERT_EQ(bv.size(), 3u);
  EXPECT_EQ(bv[0], 1.0);
  EXPECT_EQ(bv[1], -0.5);
  EXPECT_EQ(bv[2], double(0.333984375f));
  EXPECT_EQ(g.initializers.at("b").dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.initializers.at("b").shape, (ir::Shape{3}));
}

TEST(ModelLoader, RawDataAndTypedFieldsOfEveryNumericType) {
  onnx::ModelProto m = make_model();
  auto raw = [&](const std::string& name, int type, const std::vector<unsigned char>& bytes,
                 int64_t n) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(n);
    t->set_raw_data(std::string(bytes.begin(), bytes.end()));
  };
  raw("f32", onnx::TensorProto::FLOAT, {0x00, 0x00, 0x80, 0x3f, 0xcd, 0xcc, 0xcc, 0x3d}, 2);
  raw("f64", onnx::TensorProto::DOUBLE, {0, 0, 0, 0, 0, 0, 0xf0, 0xbf}, 1);
  raw("i8", onnx::TensorProto::INT8, {0xff, 0x7f}, 2);
  raw("u8", onnx::TensorProto::UINT8, {0xff, 0x01}, 2);
  raw("i16", onnx::TensorProto::INT16, {0xfe, 0xff}, 1);
  raw("i32", onnx::TensorProto::INT32, {0xff, 0xff, 0xff, 0xff}, 1);
  raw("i64", onnx::TensorProto::INT64, {0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1);
  raw("u32", onnx::TensorProto::UINT32, {0xff, 0xff, 0xff, 0xff}, 1);
  raw("b", onnx::TensorProto::BOOL, {0x01, 0x00, 0x01}, 3);
  add_float_initializer(m, "tf", {2, 1}, {0.1f, -3.5f});
  add_int64_initializer(m, "ti", {}, {42});
  auto* tb = m.mutable_graph()->add_initializer();
  tb->set_name("tb");
  tb->set_data_type(onnx::TensorProto::BOOL);
  tb->add_dims(2);
  tb->add_int32_data(1);
  tb->add_int32_data(0);
  auto* td = m.mutable_graph()->add_initializer();
  td->set_name("td");
  td->set_data_type(onnx::TensorProto::DOUBLE);
  td->add_double_data(0.25);

  ir::Graph g = parse_model(m.SerializeAsString(), "m.onnx");
  const auto& in = g.initializers;
  EXPECT_EQ(in.at("f32").reals, (std::vector<double>{1.0, double(0.1f)}));
  EXPECT_EQ(in.at("f64").reals, (std::vector<double>{-1.0}));
  EXPECT_EQ(in.at("i8").ints, (std::vector<int64_t>{-1, 127}));
  EXPECT_EQ(in.at("u8").ints, (std::vector<int64_t>{255, 1}));
  EXPECT_EQ(in.at("i16").ints, (std::vector<int64_t>{-2}));
  EXPECT_EQ(in.at("i32").ints, (std::vector<int64_t>{-1}));
  EXPECT_EQ(in.at("i64").ints, (std::vector<int64_t>{-3}));
  EXPECT_EQ(in.at("u32").ints, (std::vector<int64_t>{4294967295LL}));
  EXPECT_EQ(in.at("b").ints, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(in.at("tf").reals, (std::vector<double>{double(0.1f), -3.5}));
  EXPECT_EQ(in.at("tf").shape, (ir::Shape{2, 1}));
  EXPECT_EQ(in.at("ti").shape, ir::Shape{});
  EXPECT_EQ(in.at("ti").ints, (std::vector<int64_t>{42}));
  EXPECT_EQ(in.at("tb").ints, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(in.at("td").reals, (std::vector<double>{0.25}));
}

TEST(ModelLoader, AttributesOfEveryKind) {
  onnx::ModelProto m = make_model();
  add_input(m, "c", {}, onnx::TensorProto::BOOL);
  add_output(m, "y", {2});
  auto* n = add_node(m, "If", {"c"}, {"y"}, "", "if0");
  set_int(n, "i", 7);
  set_ints(n, "is", {1, -2});
  set_string(n, "s", "hello");
  set_strings(n, "ss", {"a", "b"});
  auto* f = n->add_attribute();
  f->set_name("f");
  f->set_type(onnx::AttributeProto::FLOAT);
  f->set_f(0.1f);
  auto* fs = n->add_attribute();
  fs->set_name("fs");
  fs->set_type(onnx::AttributeProto::FLOATS);
  fs->add_floats(1.5f);
  auto* untyped = n->add_attribute();  // old exporters leave the type unset
  untyped->set_name("old");
  untyped->set_i(3);
  auto* t = n->add_attribute();
  t->set_name("t");
  t->set_type(onnx::AttributeProto::TENSOR);
  t->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  t->mutable_t()->add_dims(2);
  t->mutable_t()->add_int64_data(5);
  t->mutable_t()->add_int64_data(6);
  auto* gr = n->add_attribute();
  gr->set_name("then_branch");
  gr->set_type(onnx::AttributeProto::GRAPH);
  auto* sub = gr->mutable_g();
  sub->set_name("then");
  set_value_info(sub->add_output(), "k", onnx::TensorProto::FLOAT, {2});
  auto* kn = sub->add_node();
  kn->set_op_type("Constant");
  kn->add_output("k");
  auto* kv = kn->add_attribute();
  kv->set_name("value");
  kv->set_type(onnx::AttributeProto::TENSOR);
  kv->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  kv->mutable_t()->add_dims(2);
  kv->mutable_t()->add_float_data(1);
  kv->mutable_t()->add_float_data(2);

  ir::Graph g = parse_model(m.SerializeAsString(), "m.onnx");
  const ir::Node& node = g.nodes[0];
  EXPECT_EQ(node.attributes.at("i").kind, ir::Attribute::Kind::Int);
  EXPECT_EQ(node.attributes.at("i").i, 7);
  EXPECT_EQ(node.attributes.at("is").ints, (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(node.attributes.at("s").s, "hello");
  EXPECT_EQ(node.attributes.at("ss").strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(node.attributes.at("f").f, double(0.1f));
  EXPECT_EQ(node.attributes.at("fs").floats, (std::vector<double>{1.5}));
  EXPECT_EQ(node.attributes.at("old").kind, ir::Attribute::Kind::Int);
  EXPECT_EQ(node.attributes.at("old").i, 3);
  ASSERT_TRUE(node.attributes.at("t").tensor);
  EXPECT_EQ(node.attributes.at("t").tensor->ints, (std::vector<int64_t>{5, 6}));
  ASSERT_TRUE(node.attributes.at("then_branch").graph);
  const ir::Graph& body = *node.attributes.at("then_branch").graph;
  ASSERT_EQ(body.nodes.size(), 1u);
  EXPECT_EQ(body.nodes[0].opset, 17);
  EXPECT_EQ(body.outputs[0].name, "k");
  EXPECT_EQ(body.nodes[0].attributes.at("value").tensor->reals, (std::vector<double>{1, 2}));
}

TEST(ModelLoader, MetadataAndSparseInitializer) {
  onnx::ModelProto m = identity_model();
  set_metadata(m, "onnx_tv.bindings", "[]");
  set_metadata(m, "author", "me");
  auto* s = m.mutable_graph()->add_sparse_initializer();
  s->add_dims(2);
  s->add_dims(3);
  s->mutable_values()->set_name("sp");
  s->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  s->mutable_values()->add_dims(2);
  s->mutable_values()->add_float_data(4);
  s->mutable_values()->add_float_data(5);
  s->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  s->mutable_indices()->add_dims(2);
  s->mutable_indices()->add_int64_data(1);
  s->mutable_indices()->add_int64_data(5);
  ir::Graph g = parse_model(m.SerializeAsString(), "m.onnx");
  EXPECT_EQ(g.metadata.at("onnx_tv.bindings"), "[]");
  EXPECT_EQ(g.metadata.at("author"), "me");
  EXPECT_EQ(g.initializers.at("sp").reals, (std::vector<double>{0, 4, 0, 0, 0, 5}));
  EXPECT_EQ(g.initializers.at("sp").shape, (ir::Shape{2, 3}));
}

TEST(ModelLoader, ExternalData) {
  TempDir dir;
  onnx::ModelProto m = identity_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_kv = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_kv("location", "weights.bin");
  add_kv("offset", "4");
  add_kv("length", "8");
  write_model(dir.file("m.onnx"), m);
  expect_input_error([&] { load_model(dir.file("m.onnx")); },
                     {dir.file("m.onnx"), "initializer 'w'", "weights.bin"});
  const float vals[] = {99.0f, 1.5f, -2.0f};
  write_text(dir.file("weights.bin"), std::string(reinterpret_cast<const char*>(vals), 12));
  ir::Graph g = load_model(dir.file("m.onnx"));
  EXPECT_EQ(g.initializers.at("w").reals, (std::vector<double>{1.5, -2.0}));
}

TEST(ModelLoader, ShapeInferenceFillsValueInfo) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {2, 3});
  add_output(m, "y", {2, 3});
  add_node(m, "Relu", {"x"}, {"t"});
  add_node(m, "Neg", {"t"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  EXPECT_FALSE(parse_model(bytes, "m.onnx").value_info.count("t"));
  ir::Graph g = parse_model(bytes, "m.onnx", LoadOptions{.infer_shapes = true});
  ASSERT_TRUE(g.value_info.count("t"));
  ASSERT_TRUE(g.value_info.at("t").shape.has_value());
  EXPECT_EQ((*g.value_info.at("t").shape)[1].size, 3);
}

TEST(ModelLoader, LocalFunctionsAreInlined) {
  onnx::ModelProto m = make_model();
  import_domain(m, "local");
  add_input(m, "x", {2});
  add_output(m, "z", {2});
  // Block(a) = LeakyRelu(Square(a), alpha = @alpha); Square(a) = Mul(a, a), itself a function.
  auto* sq = m.add_functions();
  sq->set_name("Square");
  sq->set_domain("local");
  sq->add_input("a");
  sq->add_output("s");
  auto* mul = sq->add_node();
  mul->set_op_type("Mul");
  mul->add_input("a");
  mul->add_input("a");
  mul->add_output("s");
  auto* blk = m.add_functions();
  blk->set_name("Block");
  blk->set_domain("local");
  blk->add_input("a");
  blk->add_output("out");
  blk->add_attribute("alpha");
  auto* call_sq = blk->add_node();
  call_sq->set_op_type("Square");
  call_sq->set_domain("local");
  call_sq->set_name("sq");
  call_sq->add_input("a");
  call_sq->add_output("t");
  auto* lr = blk->add_node();
  lr->set_op_type("LeakyRelu");
  lr->add_input("t");
  lr->add_output("out");
  auto* ref = lr->add_attribute();
  ref->set_name("alpha");
  ref->set_type(onnx::AttributeProto::FLOAT);
  ref->set_ref_attr_name("alpha");
  auto* c0 = add_node(m, "Block", {"x"}, {"y"}, "local", "layer0");
  auto* alpha = c0->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  add_node(m, "Block", {"y"}, {"z"}, "local", "layer1");

  ir::Graph g = parse_model(m.SerializeAsString(), "f.onnx");
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].op_type, "Mul");
  EXPECT_EQ(g.nodes[0].name, "layer0/sq/Mul");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "x"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"layer0/t"}));
  EXPECT_EQ(g.nodes[1].op_type, "LeakyRelu");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"layer0/t"}));
  EXPECT_EQ(g.nodes[1].outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.nodes[1].attributes.at("alpha").f, 0.5);
  EXPECT_EQ(g.nodes[2].outputs, (std::vector<std::string>{"layer1/t"}));
  EXPECT_EQ(g.nodes[3].outputs, (std::vector<std::string>{"z"}));
  EXPECT_FALSE(g.nodes[3].attributes.count("alpha"));  // not given: LeakyRelu's default
  EXPECT_EQ(g.nodes[3].opset, 17);
}

TEST(ModelLoaderErrors, MissingFile) {
  TempDir dir;
  expect_input_error([&] { load_model(dir.file("nope.onnx")); }, {"nope.onnx", "no such file"});
}

TEST(ModelLoaderErrors, GarbageFile) {
  TempDir dir;
  write_text(dir.file("garbage.onnx"), "this is not a protobuf \xff\xfe\x01 at all");
  expect_input_error([&] { load_model(dir.file("garbage.onnx")); },
                     {"garbage.onnx", "not an ONNX model"});
  write_text(dir.file("empty.onnx"), "");
  expect_input_error([&] { load_model(dir.file("empty.onnx")); },
                     {"empty.onnx", "not an ONNX model"});
}

TEST(ModelLoaderErrors, OldIrVersion) {
  onnx::ModelProto m = identity_model();
  m.set_ir_version(2);
  expect_input_error([&] { parse_model(m.SerializeAsString(), "old.onnx"); },
                     {"old.onnx", "IR version 2", "3 or later"});
}

// ONNX's own backend tests hold IR versions 3 to 6: read with their opset imports.
TEST(ModelLoader, ReadsIrVersions3To6) {
  for (int64_t ir : {3, 4, 5, 6}) {
    onnx::ModelProto m = identity_model();
    m.set_ir_version(ir);
    m.mutable_opset_import(0)->set_version(9);
    ir::Graph g = parse_model(m.SerializeAsString(), "old.onnx");
    EXPECT_EQ(g.ir_version, ir);
    EXPECT_EQ(g.opsets.at(""), 9);
    EXPECT_EQ(g.nodes.at(0).opset, 9);
  }
}

TEST(ModelLoaderErrors, StringTensorAndWrongCounts) {
  onnx::ModelProto m = identity_model();
  auto* s = m.mutable_graph()->add_initializer();
  s->set_name("names");
  s->set_data_type(onnx::TensorProto::STRING);
  s->add_dims(1);
  s->add_string_data("a");
  expect_input_error([&] { parse_model(m.SerializeAsString(), "s.onnx"); },
                     {"s.onnx", "initializer 'names'", "string"});

  onnx::ModelProto m2 = identity_model();
  add_float_initializer(m2, "w", {2, 2}, {1, 2, 3});
  expect_input_error([&] { parse_model(m2.SerializeAsString(), "c.onnx"); },
                     {"c.onnx", "initializer 'w'", "3 values", "expected 4"});

  onnx::ModelProto m3 = identity_model();
  auto* r = m3.mutable_graph()->add_initializer();
  r->set_name("r");
  r->set_data_type(onnx::TensorProto::FLOAT);
  r->add_dims(2);
  r->set_raw_data(std::string(7, '\0'));
  expect_input_error([&] { parse_model(m3.SerializeAsString(), "r.onnx"); },
                     {"r.onnx", "initializer 'r'", "7 bytes"});
}

TEST(ModelLoaderErrors, DefaultDomainNotImported) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  add_input(m, "x", {1});
  add_output(m, "y", {1});
  add_node(m, "Relu", {"x"}, {"y"}, "", "r");
  expect_input_error([&] { parse_model(m.SerializeAsString(), "d.onnx"); },
                     {"d.onnx", "Relu node 'r'", "opset"});
}

}  // namespace
}  // namespace onnx_tv::frontend::test
