// Shape functions of the index families: GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot, and of the selections TopK, ArgMax, ArgMin. Their kernels (index_ops.cpp,
// select_ops.cpp) rely on what is checked here.
#include "common/errors.h"
#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

void expect_index_type(const ShapeArgs& a, size_t k) {
  const ir::DType t = need(a, k).dtype;
  if (t != ir::DType::Undefined && t != ir::DType::Int64 && t != ir::DType::Int32)
    throw InputError(input_label(a.node, k) + " is " + ir::dtype_name(t) + "; indices must be int32 or int64");
}

// Indices of the rank of data whose extents are at most data's off the axis (GatherElements,
// ScatterElements).
int64_t elementwise_indices(const ShapeArgs& a) {
  const InputInfo &x = need(a, 0), &ind = need(a, 1);
  expect_index_type(a, 1);
  if (x.shape.empty()) throw InputError("data (input #0) must have rank >= 1");
  if (ind.shape.size() != x.shape.size())
    throw InputError("indices (input #1) have rank " + std::to_string(ind.shape.size()) +
                     " but data has rank " + std::to_string(x.shape.size()) + "; they must be equal");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), int64_t(x.shape.size()), "axis");
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (int64_t(d) != axis && ind.shape[d] > x.shape[d])
      throw InputError("indices (input #1) have shape " + ir::shape_string(ind.shape) +
                       ", larger than data's " + ir::shape_string(x.shape) + " on axis " +
                       std::to_string(d));
  return axis;
}

// The number k of data dimensions an ND index tuple addresses (indices' last extent), checked.
int64_t tuple_length(const ShapeArgs& a, int64_t batch_dims) {
  const InputInfo &x = need(a, 0), &ind = need(a, 1);
  expect_index_type(a, 1);
  if (ind.shape.empty()) throw InputError("indices (input #1) must have rank >= 1");
  const int64_t k = ind.shape.back();
  if (k < 1 || batch_dims + k > int64_t(x.shape.size()))
    throw InputError("indices' last dimension (" + std::to_string(k) + ") plus batch_dims (" +
                     std::to_string(batch_dims) + ") must be in [1, " +
                     std::to_string(x.shape.size()) + "], data's rank");
  return k;
}

}  // namespace

Outputs infer_gather_elements(const ShapeArgs& a) {
  elementwise_indices(a);
  return one(need(a, 1).shape, need(a, 0).dtype);
}

Outputs infer_gather_nd(const ShapeArgs& a) {
  const InputInfo &x = need(a, 0), &ind = need(a, 1);
  const int64_t b = attr_int(a.node, "batch_dims", 0);
  if (b < 0 || b >= int64_t(std::min(x.shape.size(), ind.shape.size())))
    throw InputError("batch_dims " + std::to_string(b) + " must be below the ranks of data (" +
                     std::to_string(x.shape.size()) + ") and indices (" +
                     std::to_string(ind.shape.size()) + ")");
  const int64_t k = tuple_length(a, b);
  for (int64_t d = 0; d < b; ++d)
    if (x.shape[size_t(d)] != ind.shape[size_t(d)])
      throw InputError("batch dimension " + std::to_string(d) + " is " +
                       std::to_string(ind.shape[size_t(d)]) + " in indices and " +
                       std::to_string(x.shape[size_t(d)]) + " in data; they must be equal");
  ir::Shape out(ind.shape.begin(), ind.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  return one(out, x.dtype);
}

Outputs infer_scatter_elements(const ShapeArgs& a) {
  elementwise_indices(a);
  const ir::DType t = same_dtype(a, 0, 2);
  if (need(a, 2).shape != need(a, 1).shape)
    throw InputError("updates (input #2) have shape " + ir::shape_string(need(a, 2).shape) +
                     " but indices " + ir::shape_string(need(a, 1).shape) + "; they must be equal");
  return one(need(a, 0).shape, t);
}

Outputs infer_scatter_nd(const ShapeArgs& a) {
  const InputInfo &x = need(a, 0), &ind = need(a, 1), &upd = need(a, 2);
  const int64_t k = tuple_length(a, 0);
  const ir::DType t = same_dtype(a, 0, 2);
  ir::Shape want(ind.shape.begin(), ind.shape.end() - 1);
  want.insert(want.end(), x.shape.begin() + k, x.shape.end());
  if (upd.shape != want)
    throw InputError("updates (input #2) have shape " + ir::shape_string(upd.shape) + "; indices " +
                     ir::shape_string(ind.shape) + " and data " + ir::shape_string(x.shape) +
                     " need " + ir::shape_string(want));
  return one(x.shape, t);
}

Outputs infer_one_hot(const ShapeArgs& a) {
  const InputInfo &ind = need(a, 0), &depth = need(a, 1), &values = need(a, 2);
  if (ir::element_count(depth.shape) != 1)
    throw InputError("depth (input #1) has shape " + ir::shape_string(depth.shape) +
                     "; it must hold one number");
  if (values.shape.size() != 1 || values.shape[0] != 2)
    throw InputError("values (input #2) have shape " + ir::shape_string(values.shape) +
                     "; they must be [2]: off and on");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), int64_t(ind.shape.size()) + 1, "axis");
  const std::vector<int64_t>* d = ints_of(a, 1);
  if (!d) return one(std::nullopt, values.dtype);  // a depth read from data
  if (d->at(0) < 1) throw InputError("depth (input #1) is " + std::to_string(d->at(0)) + "; it must be positive");
  ir::Shape out = ind.shape;
  out.insert(out.begin() + axis, d->at(0));
  return one(out, values.dtype);
}

Outputs infer_top_k(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  if (x.shape.empty()) throw InputError("X (input #0) must have rank >= 1");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), int64_t(x.shape.size()), "axis");
  std::optional<int64_t> k;
  if (a.node.opset < 10) {
    k = attr_int(a.node, "k", -1);
  } else {
    const InputInfo& kin = need(a, 1);
    if (ir::element_count(kin.shape) != 1)
      throw InputError("K (input #1) has shape " + ir::shape_string(kin.shape) + "; it must hold one number");
    if (const std::vector<int64_t>* v = ints_of(a, 1)) k = v->at(0);
  }
  if (k && (*k < 1 || *k > x.shape[size_t(axis)]))
    throw InputError("K is " + std::to_string(*k) + "; it must be in [1, " +
                     std::to_string(x.shape[size_t(axis)]) + "], the size of axis " + std::to_string(axis));
  if (!k) return {{std::nullopt, x.dtype}, {std::nullopt, ir::DType::Int64}};
  ir::Shape out = x.shape;
  out[size_t(axis)] = *k;
  return {{out, x.dtype}, {out, ir::DType::Int64}};
}

Outputs infer_arg_reduce(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  if (x.shape.empty()) throw InputError("data (input #0) must have rank >= 1");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), int64_t(x.shape.size()), "axis");
  if (x.shape[size_t(axis)] < 1)
    throw InputError("axis " + std::to_string(axis) + " is empty; it has no largest element");
  ir::Shape out = x.shape;
  if (attr_int(a.node, "keepdims", 1)) out[size_t(axis)] = 1;
  else out.erase(out.begin() + axis);
  return one(out, ir::DType::Int64);
}

}  // namespace onnx_tv::ops::detail
