#include "ops/infer_shapes.h"

#include "common/errors.h"
#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops {

namespace detail {

std::string input_label(const ir::Node& n, size_t i) {
  const std::string name = i < n.inputs.size() ? n.inputs[i] : "";
  return "input #" + std::to_string(i) + (name.empty() ? "" : " ('" + name + "')");
}

const InputInfo* maybe(const ShapeArgs& a, size_t i) {
  return i < a.inputs.size() ? a.inputs[i] : nullptr;
}

const InputInfo& need(const ShapeArgs& a, size_t i) {
  const InputInfo* in = maybe(a, i);
  if (!in) throw InputError("required input #" + std::to_string(i) + " is missing");
  return *in;
}

void reject_attribute_taken_as_input(const ShapeArgs& a, size_t i, const char* name) {
  if (a.schema.is_shape_input(i) && a.node.attribute(name))
    throw InputError("has attribute '" + std::string(name) + "', which " + a.node.op_type +
                     " at opset " + std::to_string(a.node.opset) + " takes as input #" +
                     std::to_string(i) + " instead");
}

const std::vector<int64_t>* ints_of(const ShapeArgs& a, size_t i) {
  const InputInfo* in = maybe(a, i);
  return in && in->ints ? &*in->ints : nullptr;
}

void expect_rank(const ShapeArgs& a, size_t i, int64_t lo, int64_t hi) {
  const int64_t r = int64_t(need(a, i).shape.size());
  if (r < lo || r > hi) {
    const std::string want = lo == hi ? std::to_string(lo)
                             : hi == INT64_MAX ? "at least " + std::to_string(lo)
                                               : std::to_string(lo) + " to " + std::to_string(hi);
    throw InputError(input_label(a.node, i) + " has rank " + std::to_string(r) + " (shape " +
                     ir::shape_string(need(a, i).shape) + "); " + a.node.op_type +
                     " needs rank " + want);
  }
}

ir::DType same_dtype(const ShapeArgs& a, size_t i, size_t j) {
  const ir::DType x = need(a, i).dtype, y = need(a, j).dtype;
  if (x == ir::DType::Undefined) return y;
  if (y == ir::DType::Undefined || x == y) return x;
  throw InputError(input_label(a.node, i) + " is " + ir::dtype_name(x) + " but " +
                   input_label(a.node, j) + " is " + ir::dtype_name(y) +
                   "; they must have the same type");
}

Outputs one(std::optional<ir::Shape> s, ir::DType t) { return {OutputInfo{std::move(s), t}}; }

}  // namespace detail

namespace {

using namespace detail;

Outputs dispatch(const ShapeArgs& a) {
  switch (a.schema.traits.rule) {
    case DimRule::Unset: break;
    case DimRule::Broadcast: return infer_broadcast(a);
    case DimRule::SameShape:
    case DimRule::CumSum: return infer_same_shape(a);
    case DimRule::Transpose: return infer_transpose(a);
    case DimRule::MatMul: return infer_matmul(a);
    case DimRule::Gemm: return infer_gemm(a);
    case DimRule::Einsum: return infer_einsum(a);
    case DimRule::Reduce: return infer_reduce(a);
    case DimRule::Reshape: return infer_reshape(a);
    case DimRule::Flatten: return infer_flatten(a);
    case DimRule::Squeeze: return infer_squeeze(a);
    case DimRule::Unsqueeze: return infer_unsqueeze(a);
    case DimRule::Concat: return infer_concat(a);
    case DimRule::Split: return infer_split(a);
    case DimRule::Slice: return infer_slice(a);
    case DimRule::Expand: return infer_expand(a);
    case DimRule::Tile: return infer_tile(a);
    case DimRule::ConstantOfShape: return infer_constant_of_shape(a);
    case DimRule::Range: return infer_range(a);
    case DimRule::Trilu: return infer_trilu(a);
    case DimRule::Gather: return infer_gather(a);
    case DimRule::GatherElements: return infer_gather_elements(a);
    case DimRule::GatherND: return infer_gather_nd(a);
    case DimRule::ScatterElements: return infer_scatter_elements(a);
    case DimRule::ScatterND: return infer_scatter_nd(a);
    case DimRule::OneHot: return infer_one_hot(a);
    case DimRule::TopK: return infer_top_k(a);
    case DimRule::ArgReduce: return infer_arg_reduce(a);
    case DimRule::LayerNorm: return infer_layer_norm(a);
    case DimRule::Shape: return infer_shape(a);
    case DimRule::Size: return infer_size(a);
    case DimRule::Constant: return infer_constant(a);
  }
  ONNX_TV_ASSERT(false, "unhandled dimension rule of " + a.node.op_type);
  return {};
}

}  // namespace

std::vector<OutputInfo> infer_shapes(const OpSchema& schema, const ir::Node& node,
                                     std::span<const InputInfo* const> inputs) {
  check_onnx_schema(node, schema.since_version, inputs);
  const ShapeArgs a{schema, node, inputs};
  // Labels are built only for a message: this runs for every node a proof executes.
  auto fits = [](const ir::Shape& s) {
    int64_t n = 1;
    for (int64_t d : s)
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
    return true;
  };
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k] && !fits(inputs[k]->shape))
      (void)ir::checked_element_count(inputs[k]->shape, input_label(node, k));
  Outputs out = dispatch(a);
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k].shape && !fits(*out[k].shape))
      (void)ir::checked_element_count(*out[k].shape, "output #" + std::to_string(k));
  if (node.outputs.size() > out.size())
    throw InputError("has " + std::to_string(node.outputs.size()) + " outputs, but " +
                     node.op_type + " produces " + std::to_string(out.size()));
  out.resize(node.outputs.size());
  return out;
}

}  // namespace onnx_tv::ops
