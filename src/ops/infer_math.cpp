// Shape functions of the arithmetic families: elementwise broadcast, Softmax-like ops,
// contractions, reductions and LayerNormalization.
#include <algorithm>

#include "common/errors.h"
#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

bool valid_dtype(int64_t t) {
  return (t >= 1 && t <= 7) || (t >= 9 && t <= 13) || t == 16;
}

ir::DType result_dtype(const ShapeArgs& a) {
  switch (a.schema.traits.result) {
    case ResultType::Input0: return need(a, 0).dtype;
    case ResultType::Input1: return need(a, 1).dtype;
    case ResultType::Input2: return need(a, 2).dtype;
    case ResultType::Bool: return ir::DType::Bool;
    case ResultType::Int64: return ir::DType::Int64;
    case ResultType::CastTo: {
      const int64_t to = required_attr(a.node, "to", ir::Attribute::Kind::Int).i;
      if (!valid_dtype(to)) throw InputError("attribute 'to' is " + std::to_string(to) + ", not an element type onnx-tv knows");
      return ir::DType(to);
    }
    case ResultType::ValueAttr: {
      const ir::Attribute* v = attr(a.node, "value", ir::Attribute::Kind::Tensor);
      return v && v->tensor ? v->tensor->dtype : ir::DType::Float;
    }
  }
  return ir::DType::Undefined;
}

void check_same_types(const ShapeArgs& a) {
  std::optional<size_t> first;
  for (size_t k = 0; k < a.inputs.size() && k < 32; ++k) {
    if (!((a.schema.traits.same_types >> k) & 1u) || !a.inputs[k]) continue;
    if (first) same_dtype(a, *first, k);
    else first = k;
  }
}

}  // namespace

ir::Shape legacy_rhs_shape(const ir::Node& n, const ir::Shape& xs, const ir::Shape& ys) {
  const std::string what = input_label(n, 0) + " and " + input_label(n, 1);
  if (attr_int(n, "broadcast", 0) == 0) {
    if (xs != ys)
      throw InputError(what + " have shapes " + ir::shape_string(xs) + " and " +
                       ir::shape_string(ys) + ", which must be equal without broadcast=1");
    return ys;
  }
  const int64_t rx = int64_t(xs.size()), ry = int64_t(ys.size());
  int64_t axis = attr_int(n, "axis", rx - ry);
  if (axis < 0) axis += rx;
  if (ry > rx || axis < 0 || axis + ry > rx)
    throw InputError(what + ": " + ir::shape_string(ys) + " cannot be broadcast to " +
                     ir::shape_string(xs) + " at axis " + std::to_string(axis));
  ir::Shape out(size_t(rx), 1);
  std::copy(ys.begin(), ys.end(), out.begin() + axis);
  return out;
}

Outputs infer_broadcast(const ShapeArgs& a) {
  check_same_types(a);
  std::vector<ir::Shape> shapes;
  for (size_t k = 0; k < a.inputs.size(); ++k)
    if (a.inputs[k] && a.schema.is_data_input(k)) shapes.push_back(a.inputs[k]->shape);
  if (shapes.empty()) throw InputError("has no inputs");
  // The binary ops' legacy broadcast; without it opset 6 wants equal shapes, which the kernels
  // say in their own words (Sum-6 and Add-6 differ).
  if (a.node.opset < 7 && shapes.size() == 2 && attr_int(a.node, "broadcast", 0) != 0)
    shapes[1] = legacy_rhs_shape(a.node, shapes[0], shapes[1]);
  if (a.schema.traits.algebra == Algebra::Select) {
    const ir::DType c = need(a, 0).dtype;
    if (c != ir::DType::Bool && c != ir::DType::Undefined)
      throw InputError(input_label(a.node, 0) + " is " + ir::dtype_name(c) + "; the condition must be bool");
  }
  return one(broadcast_shapes(shapes, "the inputs"), result_dtype(a));
}

Outputs infer_same_shape(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  if (a.node.attribute("axis") || a.schema.traits.algebra == Algebra::Function) {
    const int64_t def = a.node.opset >= 13 ? -1 : 1;
    normalize_axis(attr_int(a.node, "axis", def), int64_t(x.shape.size()), "axis");
  }
  for (size_t k = 1; k < a.inputs.size(); ++k)  // Dropout's ratio and training_mode
    if (a.inputs[k] && ir::element_count(a.inputs[k]->shape) != 1)
      throw InputError(input_label(a.node, k) + " must be a scalar, has shape " +
                       ir::shape_string(a.inputs[k]->shape));
  Outputs out = one(x.shape, x.dtype);
  if (a.node.outputs.size() > 1) out.push_back(OutputInfo{x.shape, ir::DType::Bool});  // a mask
  return out;
}

Outputs infer_matmul(const ShapeArgs& a) {
  const ir::DType t = same_dtype(a, 0, 1);
  expect_rank(a, 0, 1, INT64_MAX);
  expect_rank(a, 1, 1, INT64_MAX);
  ir::Shape as = need(a, 0).shape, bs = need(a, 1).shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  if (bs[bs.size() - 2] != as.back())
    throw InputError("inner dimensions differ: " + input_label(a.node, 0) + " has shape " +
                     ir::shape_string(need(a, 0).shape) + ", " + input_label(a.node, 1) +
                     " has shape " + ir::shape_string(need(a, 1).shape));
  const ir::Shape batches[] = {ir::Shape(as.begin(), as.end() - 2), ir::Shape(bs.begin(), bs.end() - 2)};
  ir::Shape out = broadcast_shapes(batches, "batch dimensions of the operands");
  if (!a_vec) out.push_back(as[as.size() - 2]);
  if (!b_vec) out.push_back(bs.back());
  return one(out, t);
}

Outputs infer_gemm(const ShapeArgs& a) {
  const ir::DType t = same_dtype(a, 0, 1);
  expect_rank(a, 0, 2, 2);
  expect_rank(a, 1, 2, 2);
  const ir::Shape &A = need(a, 0).shape, &B = need(a, 1).shape;
  const bool ta = attr_int(a.node, "transA", 0) != 0, tb = attr_int(a.node, "transB", 0) != 0;
  const int64_t M = ta ? A[1] : A[0], K = ta ? A[0] : A[1];
  const int64_t KB = tb ? B[1] : B[0], N = tb ? B[0] : B[1];
  if (K != KB)
    throw InputError("inner dimensions differ: A has shape " + ir::shape_string(A) +
                     (ta ? " (transposed)" : "") + ", B has shape " + ir::shape_string(B) +
                     (tb ? " (transposed)" : ""));
  if (const InputInfo* c = maybe(a, 2))
    check_broadcasts_to(c->shape, {M, N}, "C (" + input_label(a.node, 2) + ")");
  return one(ir::Shape{M, N}, t);
}

Outputs infer_einsum(const ShapeArgs& a) {
  std::vector<ir::Shape> shapes;
  for (size_t n = 0; n < a.inputs.size(); ++n) shapes.push_back(need(a, n).shape);
  const std::string eq = required_attr(a.node, "equation", ir::Attribute::Kind::String).s;
  return one(plan_einsum(eq, shapes).out_shape, need(a, 0).dtype);
}

Outputs infer_reduce(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  reject_attribute_taken_as_input(a, 1, "axes");
  const bool from_input = a.schema.is_shape_input(1);
  if (from_input && maybe(a, 1) && !ints_of(a, 1)) return one(std::nullopt, x.dtype);
  const auto axes = reduce_axes_of(a.node, int64_t(x.shape.size()), ints_of(a, 1), from_input);
  if (!axes) return one(x.shape, x.dtype);
  const bool keepdims = attr_int(a.node, "keepdims", 1) != 0;
  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t ax : *axes) reduced[size_t(ax)] = true;
  ir::Shape out;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (!reduced[d]) out.push_back(x.shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return one(out, x.dtype);
}

std::optional<std::vector<int64_t>> reduce_axes_of(const ir::Node& n, int64_t rank,
                                                   const std::vector<int64_t>* axes_input,
                                                   bool axes_from_input) {
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (axes_input) axes = *axes_input;
    if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;
  } else {
    axes = attr_ints_opt(n, "axes").value_or(std::vector<int64_t>{});
  }
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  return normalize_axes(axes, rank, "axes");
}

Outputs infer_layer_norm(const ShapeArgs& a) {
  expect_rank(a, 0, 1, INT64_MAX);
  const InputInfo& x = need(a, 0);
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), int64_t(x.shape.size()), "axis");
  const ir::Shape norm(x.shape.begin() + axis, x.shape.end());
  check_broadcasts_to(need(a, 1).shape, norm, "Scale (" + input_label(a.node, 1) + ")");
  if (const InputInfo* b = maybe(a, 2))
    check_broadcasts_to(b->shape, norm, "B (" + input_label(a.node, 2) + ")");
  if (ir::element_count(norm) == 0)
    throw InputError("normalizes over no elements (shape " + ir::shape_string(x.shape) + ")");
  ir::Shape stat = x.shape;
  for (size_t d = size_t(axis); d < stat.size(); ++d) stat[d] = 1;
  return {OutputInfo{x.shape, x.dtype}, OutputInfo{stat, ir::DType::Float},
          OutputInfo{stat, ir::DType::Float}};
}

}  // namespace onnx_tv::ops::detail
