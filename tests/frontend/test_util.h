#pragma once
// Helpers for the frontend tests: a fresh folder per test, small ONNX models built with the
// protobuf classes, and a check that an InputError names what it should.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <string>
#include <vector>

#include "common/errors.h"

namespace onnx_tv::frontend::test {

// A fresh temporary folder, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "onnx_tv_frontend_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline onnx::ModelProto make_model(int64_t ir_version = 8, int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("frontend-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  return m;
}

inline void import_domain(onnx::ModelProto& m, const std::string& domain, int version = 1) {
  auto* op = m.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
}

// A tensor value info; a dim written as a negative number is left unknown, and `symbols`
// (when given) names dims symbolically in place of sizes.
inline void set_value_info(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                           const std::vector<int64_t>& dims,
                           const std::vector<std::string>& symbols = {}) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < symbols.size() && !symbols[i].empty()) d->set_dim_param(symbols[i]);
    else if (dims[i] >= 0) d->set_dim_value(dims[i]);
  }
}

inline void add_input(onnx::ModelProto& m, const std::string& name,
                      const std::vector<int64_t>& dims, int elem_type = onnx::TensorProto::FLOAT) {
  set_value_info(m.mutable_graph()->add_input(), name, elem_type, dims);
}

inline void add_output(onnx::ModelProto& m, const std::string& name,
                       const std::vector<int64_t>& dims, int elem_type = onnx::TensorProto::FLOAT) {
  set_value_info(m.mutable_graph()->add_output(), name, elem_type, dims);
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op,
                                 const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::string& domain = "", const std::string& name = "") {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline void set_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void set_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void set_strings(onnx::NodeProto* n, const std::string& name,
                        const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a->add_strings(x);
}

inline onnx::TensorProto* add_float_initializer(onnx::ModelProto& m, const std::string& name,
                                                const std::vector<int64_t>& dims,
                                                const std::vector<float>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return t;
}

inline onnx::TensorProto* add_int64_initializer(onnx::ModelProto& m, const std::string& name,
                                                const std::vector<int64_t>& dims,
                                                const std::vector<int64_t>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

inline void set_metadata(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  auto* p = m.add_metadata_props();
  p->set_key(key);
  p->set_value(value);
}

inline void write_model(const std::string& path, const onnx::ModelProto& m) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

// y = Identity(x): the smallest valid rank program, with input x and output y of `dims`.
inline onnx::ModelProto identity_model(const std::vector<int64_t>& dims = {4},
                                       const std::string& x = "x", const std::string& y = "y") {
  onnx::ModelProto m = make_model();
  add_input(m, x, dims);
  add_output(m, y, dims);
  add_node(m, "Identity", {x}, {y});
  return m;
}

// Runs f, expecting an InputError whose message holds every one of `parts`.
inline void expect_input_error(const std::function<void()>& f,
                               std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    // Set ONNX_TV_SHOW_ERRORS=1 to read the messages users would see.
    if (std::getenv("ONNX_TV_SHOW_ERRORS")) std::cout << "  error: " << msg << "\n";
    for (const auto& p : parts) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks '" << p << "': " << msg;
    }
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
}

}  // namespace onnx_tv::frontend::test
