#pragma once
// One ONNX program as the rest of onnx-tv sees it, free of protobuf: the frontend converts a
// ModelProto into a Graph, and nothing below the frontend reads files.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace onnx_tv::ir {

struct Graph;

// A constant tensor as stored in a file, before it is given meaning in a solver Context: float
// types keep the exact value of each stored float (infinities and NaN included), integer and
// bool types their integers. Independent of any Context, so one loaded Graph serves many.
struct ConstTensor {
  DType dtype = DType::Undefined;
  Shape shape;
  std::vector<double> reals;  // float types
  std::vector<int64_t> ints;  // integer and bool types
  // `reals` are exact numbers, not floats of `dtype`: the counts shape reduction freezes at
  // their full size (a mean's divisor, a size cast to float), which are integers that a
  // float16 or float32 may not hold.
  bool exact = false;
};

// The values of a constant in `ctx`: each float means what solver::float_meaning says for its
// own type (plan-format section 1), or itself when `exact`; infinities stay infinities, NaN is
// a MathError.
Tensor to_tensor(solver::Context& ctx, const ConstTensor& c);

// ONNX attribute values. Float attributes keep the float they were written as (the double is
// that float's exact value) so kernels can give them their plan-format meaning.
struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::shared_ptr<ConstTensor> tensor;
  std::shared_ptr<ir::Graph> graph;
};

struct Node {
  std::string name;      // the exporter's node name ("/layers.3/attn/MatMul_1"); may be empty
  std::string op_type;
  std::string domain;    // "" for the default ONNX domain
  int opset = 0;         // the model's opset for this node's domain
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attributes;

  // "MatMul node '/layers.3/attn/MatMul_1'" or "MatMul node #12 (unnamed)".
  std::string describe(size_t index) const;
  const Attribute* attribute(const std::string& name) const;
};

// A dimension as declared: a static size or an exporter's symbolic name.
struct Dim {
  std::optional<int64_t> size;
  std::string symbol;
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;
  std::optional<std::vector<Dim>> shape;  // nullopt: shape not declared
};

// Plan-format section 1: declared static sizes must hold. Throws InputError naming the file and
// value when every value `shape_of` knows (nullopt: unknown) agrees with the graph outputs and
// value_info declared in `g`.
void check_declared_shapes(const Graph& g,
                           const std::function<std::optional<Shape>(const std::string&)>& shape_of);

struct Graph {
  std::string file;                   // where it was read from, for messages
  std::vector<ValueInfo> inputs;      // graph inputs (may include initializers' names)
  std::vector<ValueInfo> outputs;
  std::map<std::string, ValueInfo> value_info;
  std::map<std::string, ConstTensor> initializers;
  std::vector<Node> nodes;            // in file order (ONNX requires topological order)
  std::map<std::string, int> opsets;  // domain -> version ("" is the default domain)
  std::map<std::string, std::string> metadata;
  int64_t ir_version = 0;
};

}  // namespace onnx_tv::ir
