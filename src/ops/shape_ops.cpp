// Ops that move elements without computing: Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split,
// Slice, Transpose, Expand, Tile. Values are copied, never rebuilt, so a slice of a symbolic
// tensor holds the very Values of the whole.
#include <algorithm>
#include <numeric>

#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

// Output element idx reads input element in_offset(idx).
template <class F>
Tensor remap(const Tensor& x, Shape out_shape, F in_offset) {
  const int64_t n = ir::element_count(out_shape);
  std::vector<Value> data;
  data.reserve(n);
  std::vector<int64_t> idx(out_shape.size(), 0);
  for (int64_t k = 0; k < n; ++k, next_index(idx, out_shape)) data.push_back(x.data[in_offset(idx)]);
  return ir::make_tensor(x.dtype, std::move(out_shape), std::move(data));
}

Tensor with_shape(const Tensor& x, Shape s) { return ir::make_tensor(x.dtype, std::move(s), x.data); }

std::vector<Tensor> reshape_kernel(KernelArgs& a) {
  const Tensor& x = input(a, 0);
  const std::vector<int64_t> target = const_ints(a.ctx, input(a, 1), "shape (input #1)");
  return {with_shape(x, reshape_target(x.shape, target, attr_int(a.node, "allowzero", 0) != 0))};
}

std::vector<Tensor> flatten_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const Tensor& x = input(a, 0);
  int64_t axis = attr_int(a.node, "axis", 1);
  if (axis < -x.rank() || axis > x.rank()) {
    throw InputError("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(x.rank()));
  }
  if (axis < 0) axis += x.rank();
  return {with_shape(x, {product(x.shape, 0, axis), product(x.shape, axis, x.shape.size())})};
}

// Axes of Squeeze/Unsqueeze: input #1 from opset 13, the attribute before.
std::optional<std::vector<int64_t>> axes_arg(KernelArgs& a, bool from_input) {
  if (!from_input) return attr_ints_opt(a.node, "axes");
  const Tensor* t = optional_input(a, 1);
  if (!t) return std::nullopt;
  return const_ints(a.ctx, *t, "axes (input #1)");
}

Kernel squeeze_kernel(bool from_input) {
  return [from_input](KernelArgs& a) {
    const Tensor& x = input(a, 0);
    return std::vector<Tensor>{with_shape(x, squeezed(x.shape, axes_arg(a, from_input)))};
  };
}

Kernel unsqueeze_kernel(bool from_input) {
  return [from_input](KernelArgs& a) {
    const Tensor& x = input(a, 0);
    auto axes = axes_arg(a, from_input);
    if (!axes) throw InputError("axes are required");
    return std::vector<Tensor>{with_shape(x, unsqueezed(x.shape, *axes))};
  };
}

std::vector<Tensor> concat_kernel(KernelArgs& a) {
  if (a.inputs.empty()) throw InputError("needs at least one input");
  const Tensor& first = input(a, 0);
  const int64_t axis =
      normalize_axis(required_attr(a.node, "axis", ir::Attribute::Kind::Int).i, first.rank(), "axis");
  Shape out = first.shape;
  out[axis] = 0;
  for (size_t n = 0; n < a.inputs.size(); ++n) {
    const Tensor& t = input(a, n);
    common_dtype(a, 0, n);
    bool ok = t.rank() == first.rank();
    for (int64_t d = 0; ok && d < t.rank(); ++d) ok = d == axis || t.shape[d] == first.shape[d];
    if (!ok) {
      throw InputError(input_label(a, n) + " has shape " + ir::shape_string(t.shape) +
                       ", which does not match " + ir::shape_string(first.shape) +
                       " outside axis " + std::to_string(axis));
    }
    out[axis] += t.shape[axis];
  }
  const int64_t outer = product(out, 0, axis), inner = product(out, axis + 1, out.size());
  std::vector<Value> data;
  data.reserve(ir::element_count(out));
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : a.inputs) {
      const int64_t chunk = t->shape[axis] * inner;
      data.insert(data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
    }
  }
  return {ir::make_tensor(first.dtype, std::move(out), std::move(data))};
}

// version 11: `split` attribute; 13: `split` input; 18: also `num_outputs` (last chunk smaller).
Kernel split_kernel(int version) {
  return [version](KernelArgs& a) {
    expect_input_count(a, 1, version >= 13 ? 2 : 1);
    const Tensor& x = input(a, 0);
    const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), x.rank(), "axis");
    const int64_t dim = x.shape[axis];
    std::optional<std::vector<int64_t>> sizes;
    if (version >= 13) {
      if (const Tensor* s = optional_input(a, 1)) sizes = const_ints(a.ctx, *s, "split (input #1)");
    } else {
      sizes = attr_ints_opt(a.node, "split");
    }
    const auto num_attr = version >= 18 ? attr_int_opt(a.node, "num_outputs") : std::nullopt;
    if (sizes && num_attr) throw InputError("gives both the split input and num_outputs");
    sizes = split_sizes(dim, sizes, num_attr ? *num_attr : int64_t(a.node.outputs.size()),
                        num_attr.has_value(), a.node.outputs.size());
    const int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis + 1, x.rank());
    std::vector<Tensor> out;
    int64_t start = 0;
    for (int64_t s : *sizes) {
      Shape shape = x.shape;
      shape[axis] = s;
      std::vector<Value> data;
      for (int64_t o = 0; o < outer; ++o) {
        auto from = x.data.begin() + (o * dim + start) * inner;
        data.insert(data.end(), from, from + s * inner);
      }
      out.push_back(ir::make_tensor(x.dtype, std::move(shape), std::move(data)));
      start += s;
    }
    return out;
  };
}

std::vector<Tensor> slice_of(const Tensor& x, const std::vector<int64_t>& starts,
                             const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                             const std::vector<int64_t>& steps) {
  std::vector<int64_t> first(x.rank(), 0), step(x.rank(), 1);
  Shape out = x.shape;
  for (const SliceAxis& r : slice_ranges(x.shape, starts, ends, axes, steps)) {
    out[r.axis] = r.size;
    first[r.axis] = r.first;
    step[r.axis] = r.step;
  }
  const std::vector<int64_t> st = ir::strides(x.shape);
  return {remap(x, out, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (first[d] + idx[d] * step[d]) * st[d];
    return off;
  })};
}

std::vector<Tensor> slice_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 5);
  const std::vector<int64_t> starts = const_ints(a.ctx, input(a, 1), "starts (input #1)");
  const std::vector<int64_t> ends = const_ints(a.ctx, input(a, 2), "ends (input #2)");
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (const Tensor* t = optional_input(a, 3)) axes = const_ints(a.ctx, *t, "axes (input #3)");
  if (const Tensor* t = optional_input(a, 4)) steps = const_ints(a.ctx, *t, "steps (input #4)");
  return slice_of(input(a, 0), starts, ends, axes, steps);
}

// Slice-1 (opsets 1 to 9): starts, ends and axes are attributes, every step is 1.
std::vector<Tensor> slice_v1_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const auto ints = ir::Attribute::Kind::Ints;
  const std::vector<int64_t> starts = required_attr(a.node, "starts", ints).ints;
  const std::vector<int64_t> ends = required_attr(a.node, "ends", ints).ints;
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (auto t = attr_ints_opt(a.node, "axes")) axes = *t;
  return slice_of(input(a, 0), starts, ends, axes, std::vector<int64_t>(starts.size(), 1));
}

std::vector<Tensor> transpose_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const Tensor& x = input(a, 0);
  std::vector<int64_t> perm(x.rank());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (auto p = attr_ints_opt(a.node, "perm")) perm = *p;
  if (int64_t(perm.size()) != x.rank()) {
    throw InputError("perm " + ir::shape_string(perm) + " does not fit shape " +
                     ir::shape_string(x.shape));
  }
  perm = normalize_axes(perm, x.rank(), "perm");
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = x.shape[perm[d]];
  const std::vector<int64_t> st = ir::strides(x.shape);
  return {remap(x, out, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * st[perm[d]];
    return off;
  })};
}

std::vector<Tensor> expand_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const std::vector<int64_t> s = const_ints(a.ctx, input(a, 1), "shape (input #1)");
  const Shape shapes[] = {x.shape, Shape(s.begin(), s.end())};
  Shape out = broadcast_shapes(shapes, "data and the target shape");
  return {broadcast_to(x, out, input_label(a, 0))};
}

std::vector<Tensor> tile_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const std::vector<int64_t> reps = const_ints(a.ctx, input(a, 1), "repeats (input #1)");
  if (int64_t(reps.size()) != x.rank()) {
    throw InputError("repeats " + ir::shape_string(reps) + " must have one entry per dimension of " +
                     ir::shape_string(x.shape));
  }
  Shape out = x.shape;
  for (size_t d = 0; d < reps.size(); ++d) {
    if (reps[d] < 0) throw InputError("repeats " + ir::shape_string(reps) + " hold a negative");
    out[d] *= reps[d];
  }
  const std::vector<int64_t> st = ir::strides(x.shape);
  return {remap(x, out, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] % x.shape[d]) * st[d];
    return off;
  })};
}

}  // namespace

void add_shape_ops(std::vector<OpSchema>& defs) {
  using enum DimRule;
  using enum Movement;
  // Every op here moves elements: linear in its data (input #0, Concat: all), shape inputs apart.
  auto moves = [](DimRule rule, Movement m, uint32_t shape_inputs, bool exact = true) {
    return Traits{.rule = rule, .algebra = Algebra::Moves, .linearity = Linearity::Joint,
                  .movement = m, .shape_inputs = shape_inputs, .data_inputs = ~shape_inputs,
                  .linear_inputs = ~shape_inputs, .shape_arith = exact};
  };
  add_op(defs, "Reshape", {5, 13, 14, 19}, reshape_kernel, moves(Reshape, Copies, 0b10));
  add_op(defs, "Flatten", {1, 9, 11, 13}, flatten_kernel, moves(Flatten, Copies, 0));
  add_op(defs, "Squeeze", {1, 11}, squeeze_kernel(false), moves(Squeeze, Copies, 0));
  add_op(defs, "Squeeze", {13}, squeeze_kernel(true), moves(Squeeze, Copies, 0b10));
  add_op(defs, "Unsqueeze", {1, 11}, unsqueeze_kernel(false), moves(Unsqueeze, Copies, 0));
  add_op(defs, "Unsqueeze", {13}, unsqueeze_kernel(true), moves(Unsqueeze, Copies, 0b10));
  Traits concat = moves(Concat, None, 0);
  concat.same_types = ~0u;
  add_op(defs, "Concat", {4, 11, 13}, concat_kernel, concat);
  add_op(defs, "Split", {2, 11}, split_kernel(11), moves(Split, Selects, 0, false));
  add_op(defs, "Split", {13}, split_kernel(13), moves(Split, Selects, 0b10, false));
  add_op(defs, "Split", {18}, split_kernel(18), moves(Split, Selects, 0b10, false));
  add_op(defs, "Slice", {1}, slice_v1_kernel, moves(Slice, Selects, 0));
  add_op(defs, "Slice", {10, 11, 13}, slice_kernel, moves(Slice, Selects, 0b11110));
  add_op(defs, "Transpose", {1, 13}, transpose_kernel, moves(Transpose, Copies, 0));
  add_op(defs, "Expand", {8, 13}, expand_kernel, moves(Expand, None, 0b10));
  add_op(defs, "Tile", {6, 13}, tile_kernel, moves(Tile, None, 0b10));
}

}  // namespace onnx_tv::ops::detail
