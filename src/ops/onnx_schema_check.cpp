// The part of validation ONNX's own schemas know exactly: how many inputs and outputs an op
// takes, which of them may be omitted, and each attribute's kind. Asked at the node's opset so
// a node is held to the revision its model declares.
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "common/errors.h"
#include "ops/infer_shapes.h"

namespace onnx_tv::ops {

namespace {

using Kind = ir::Attribute::Kind;

onnx::AttributeProto::AttributeType proto_kind(Kind k) {
  switch (k) {
    case Kind::Int: return onnx::AttributeProto::INT;
    case Kind::Float: return onnx::AttributeProto::FLOAT;
    case Kind::String: return onnx::AttributeProto::STRING;
    case Kind::Ints: return onnx::AttributeProto::INTS;
    case Kind::Floats: return onnx::AttributeProto::FLOATS;
    case Kind::Strings: return onnx::AttributeProto::STRINGS;
    case Kind::Tensor: return onnx::AttributeProto::TENSOR;
    case Kind::Graph: return onnx::AttributeProto::GRAPH;
  }
  return onnx::AttributeProto::UNDEFINED;
}

std::string kind_name(onnx::AttributeProto::AttributeType t) {
  std::string s = onnx::AttributeProto::AttributeType_Name(t);
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string range(int lo, int hi) {
  if (lo == hi) return std::to_string(lo);
  if (hi == std::numeric_limits<int>::max()) return "at least " + std::to_string(lo);
  return "between " + std::to_string(lo) + " and " + std::to_string(hi);
}

const char* type_str(ir::DType t) {
  switch (t) {
    case ir::DType::Float: return "tensor(float)";
    case ir::DType::UInt8: return "tensor(uint8)";
    case ir::DType::Int8: return "tensor(int8)";
    case ir::DType::UInt16: return "tensor(uint16)";
    case ir::DType::Int16: return "tensor(int16)";
    case ir::DType::Int32: return "tensor(int32)";
    case ir::DType::Int64: return "tensor(int64)";
    case ir::DType::String: return "tensor(string)";
    case ir::DType::Bool: return "tensor(bool)";
    case ir::DType::Float16: return "tensor(float16)";
    case ir::DType::Double: return "tensor(double)";
    case ir::DType::UInt32: return "tensor(uint32)";
    case ir::DType::UInt64: return "tensor(uint64)";
    case ir::DType::BFloat16: return "tensor(bfloat16)";
    case ir::DType::Undefined: break;
  }
  return "";
}

// Whether input #i may have element type `t`: its formal parameter's type, or one its type
// parameter allows (a variadic last parameter covers the inputs after it). Runs for every node
// a proof executes, so it copies nothing.
bool type_allowed(const onnx::OpSchema& s, size_t i, const char* t) {
  const auto& formal = s.inputs();
  if (formal.empty()) return true;
  const auto& p = formal[std::min(i, formal.size() - 1)];
  for (const auto& c : s.typeConstraintParams())
    if (c.type_param_str == p.GetTypeStr())
      return std::find(c.allowed_type_strs.begin(), c.allowed_type_strs.end(), t) !=
             c.allowed_type_strs.end();
  return p.GetTypeStr() == t;
}

}  // namespace

void check_onnx_schema(const ir::Node& node, int since_version,
                       std::span<const InputInfo* const> inputs) {
  if (!(node.domain.empty() || node.domain == "ai.onnx")) return;
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(node.op_type, node.opset, "");
  if (!s) return;  // not an ONNX op at this opset: the registry says whether onnx-tv models it
  // A revision newer than the ONNX library knows (ReduceMax-18 with its axes input) is checked
  // by onnx-tv's own shape function only; an older schema would hold it to the wrong counts.
  if (s->since_version() < since_version) return;
  // Named only in messages: built when one is written, not for every node run.
  auto rev_of = [&] { return node.op_type + "-" + std::to_string(s->since_version()); };
  const int n_in = int(node.inputs.size()), n_out = int(node.outputs.size());
  if (n_in < s->min_input() || n_in > s->max_input())
    throw InputError("has " + std::to_string(n_in) + " inputs; " + rev_of() + " takes " +
                     range(s->min_input(), s->max_input()));
  if (n_out < s->min_output() || n_out > s->max_output())
    throw InputError("has " + std::to_string(n_out) + " outputs; " + rev_of() + " gives " +
                     range(s->min_output(), s->max_output()));
  const auto& formal = s->inputs();
  for (int i = 0; i < n_in && i < int(formal.size()); ++i)
    if (node.inputs[size_t(i)].empty() &&
        formal[size_t(i)].GetOption() == onnx::OpSchema::FormalParameterOption::Single)
      throw InputError("omits input #" + std::to_string(i) + " ('" + formal[size_t(i)].GetName() +
                       "'), which " + rev_of() + " requires");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] || inputs[i]->dtype == ir::DType::Undefined) continue;
    if (!type_allowed(*s, i, type_str(inputs[i]->dtype)))
      throw InputError("input #" + std::to_string(i) + " ('" + node.inputs[i] + "') is " +
                       ir::dtype_name(inputs[i]->dtype) + ", which " + rev_of() + " does not take");
  }
  // An attribute the revision does not have (ReduceSum-13's "axes", now an input) would be read
  // by one reader and ignored by another: ONNX's checker rejects it, and so does onnx-tv.
  for (const auto& [name, attr] : node.attributes)
    if (!s->attributes().count(name))
      throw InputError("has attribute '" + name + "', which " + rev_of() + " does not take");
  for (const auto& [name, a] : s->attributes()) {
    auto it = node.attributes.find(name);
    if (it == node.attributes.end()) {
      if (a.required) throw InputError("lacks attribute '" + name + "', which " + rev_of() + " requires");
      continue;
    }
    if (proto_kind(it->second.kind) != a.type)
      throw InputError("attribute '" + name + "' is " + kind_name(proto_kind(it->second.kind)) +
                       "; " + rev_of() + " expects " + kind_name(a.type));
  }
}

}  // namespace onnx_tv::ops
