// Shape functions of the families that move, select or make values: layout ops, slicing,
// gathering, and the sources of shapes and constants. The size arithmetic here is the one the
// kernels use (reshape_target, split_sizes, slice_ranges, squeezed, unsqueezed).
#include <algorithm>
#include <numeric>

#include "common/errors.h"
#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

int64_t rank_of(const ShapeArgs& a, size_t i) { return int64_t(need(a, i).shape.size()); }

int64_t times(int64_t x, int64_t y, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) throw InputError(what + " does not fit a 64-bit integer");
  return r;
}

// Inputs read as shapes from opset `since` on, attributes before; nullptr when not known.
const std::vector<int64_t>* from_input_or_attr(const ShapeArgs& a, size_t i, const char* name,
                                               std::optional<std::vector<int64_t>>& holder) {
  if (a.schema.is_shape_input(i)) return ints_of(a, i);
  holder = attr_ints_opt(a.node, name);
  return holder ? &*holder : nullptr;
}

}  // namespace

ir::Shape reshape_target(const ir::Shape& in, std::vector<int64_t> target, bool allowzero) {
  const std::string what = "target shape " + ir::shape_string(target) + " for data of shape " +
                           ir::shape_string(in);
  const int64_t total = ir::checked_element_count(in, "the data");
  ir::Shape out;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t s = target[i];
    if (s == -1) {
      if (infer >= 0) throw InputError(what + ": more than one -1");
      infer = int64_t(i);
      out.push_back(1);
      continue;
    }
    if (s == 0 && !allowzero) {
      if (i >= in.size()) throw InputError(what + ": 0 at a position the data lacks");
      s = in[i];
    }
    if (s < 0) throw InputError(what + ": negative size " + std::to_string(s));
    out.push_back(s);
    known = times(known, s, what + ": the element count");
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) throw InputError(what + ": cannot infer the -1");
    out[size_t(infer)] = total / known;
  } else if (known != total) {
    throw InputError(what + ": element counts differ");
  }
  return out;
}

std::vector<int64_t> split_sizes(int64_t dim, std::optional<std::vector<int64_t>> sizes,
                                 int64_t outputs, bool uneven, size_t node_outputs) {
  if (!sizes) {
    if (outputs <= 0) throw InputError("number of outputs must be positive");
    if (!uneven && dim % outputs != 0)
      throw InputError("an axis of size " + std::to_string(dim) + " does not split evenly into " +
                       std::to_string(outputs) + " outputs");
    const int64_t chunk = dim / outputs + (dim % outputs != 0);
    sizes.emplace();
    for (int64_t left = dim, i = 0; i < outputs; ++i, left -= chunk)
      sizes->push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0) throw InputError("split sizes " + ir::shape_string(*sizes) + " hold a negative");
    if (__builtin_add_overflow(total, s, &total))
      throw InputError("split sizes " + ir::shape_string(*sizes) + " overflow");
  }
  if (total != dim)
    throw InputError("split sizes " + ir::shape_string(*sizes) + " do not add up to " +
                     std::to_string(dim) + ", the size of the axis");
  if (node_outputs != 0 && node_outputs != sizes->size())
    throw InputError("has " + std::to_string(node_outputs) + " outputs but " +
                     std::to_string(sizes->size()) + " split sizes");
  return *sizes;
}

std::vector<SliceAxis> slice_ranges(const ir::Shape& in, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                    const std::vector<int64_t>& steps) {
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    throw InputError("starts, ends, axes and steps must have the same length (" +
                     std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " +
                     std::to_string(axes.size()) + ", " + std::to_string(steps.size()) + ")");
  axes = normalize_axes(axes, int64_t(in.size()), "axes");
  std::vector<SliceAxis> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = axes[i], dim = in[size_t(ax)], st = steps[i];
    if (st == 0) throw InputError("step for axis " + std::to_string(ax) + " is 0");
    // Clamping as the ONNX spec gives it; sentinels (INT64_MIN/MAX) clamp without overflow.
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t size = 0;
    if (dim == 0) {
      size = 0;  // nothing to select (and the clamps below would have an empty range)
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      size = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      size = s > e ? (s - e - 1) / (st == INT64_MIN ? dim : -st) + 1 : 0;
    }
    out.push_back({ax, s, st, size});
  }
  return out;
}

ir::Shape squeezed(const ir::Shape& in, const std::optional<std::vector<int64_t>>& axes) {
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t ax : normalize_axes(*axes, int64_t(in.size()), "axes")) {
      if (in[size_t(ax)] != 1)
        throw InputError("cannot squeeze axis " + std::to_string(ax) + " of shape " +
                         ir::shape_string(in) + ": its size is not 1");
      drop[size_t(ax)] = true;
    }
  } else {
    for (size_t d = 0; d < drop.size(); ++d) drop[d] = in[d] == 1;
  }
  ir::Shape out;
  for (size_t d = 0; d < drop.size(); ++d)
    if (!drop[d]) out.push_back(in[d]);
  return out;
}

ir::Shape unsqueezed(const ir::Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = int64_t(in.size() + axes.size());
  std::vector<bool> added(size_t(rank), false);
  for (int64_t ax : normalize_axes(axes, rank, "axes")) added[size_t(ax)] = true;
  ir::Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(added[size_t(d)] ? 1 : in[next++]);
  return out;
}

Outputs infer_transpose(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  std::vector<int64_t> perm(x.shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (auto p = attr_ints_opt(a.node, "perm")) perm = *p;
  if (perm.size() != x.shape.size())
    throw InputError("perm " + ir::shape_string(perm) + " does not fit shape " + ir::shape_string(x.shape));
  perm = normalize_axes(perm, int64_t(x.shape.size()), "perm");
  ir::Shape out;
  for (int64_t p : perm) out.push_back(x.shape[size_t(p)]);
  return one(out, x.dtype);
}

Outputs infer_reshape(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  expect_rank(a, 1, 1, 1);
  const auto* target = ints_of(a, 1);
  if (!target) return one(std::nullopt, x.dtype);
  return one(reshape_target(x.shape, *target, attr_int(a.node, "allowzero", 0) != 0), x.dtype);
}

Outputs infer_flatten(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  const int64_t r = rank_of(a, 0);
  int64_t axis = attr_int(a.node, "axis", 1);
  if (axis < -r || axis > r)
    throw InputError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  const ir::Shape lo(x.shape.begin(), x.shape.begin() + axis), hi(x.shape.begin() + axis, x.shape.end());
  return one(ir::Shape{ir::checked_element_count(lo, "the leading dimensions"),
                       ir::checked_element_count(hi, "the trailing dimensions")},
             x.dtype);
}

Outputs infer_squeeze(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  reject_attribute_taken_as_input(a, 1, "axes");
  std::optional<std::vector<int64_t>> holder;
  const auto* axes = from_input_or_attr(a, 1, "axes", holder);
  if (a.schema.is_shape_input(1) && maybe(a, 1) && !axes) return one(std::nullopt, x.dtype);
  return one(squeezed(x.shape, axes ? std::optional(*axes) : std::nullopt), x.dtype);
}

Outputs infer_unsqueeze(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  reject_attribute_taken_as_input(a, 1, "axes");
  std::optional<std::vector<int64_t>> holder;
  const auto* axes = from_input_or_attr(a, 1, "axes", holder);
  if (a.schema.is_shape_input(1) && maybe(a, 1) && !axes) return one(std::nullopt, x.dtype);
  if (!axes) throw InputError("axes are required");
  return one(unsqueezed(x.shape, *axes), x.dtype);
}

Outputs infer_concat(const ShapeArgs& a) {
  const InputInfo& first = need(a, 0);
  const int64_t axis = normalize_axis(required_attr(a.node, "axis", ir::Attribute::Kind::Int).i,
                                      int64_t(first.shape.size()), "axis");
  ir::Shape out = first.shape;
  out[size_t(axis)] = 0;
  for (size_t n = 0; n < a.inputs.size(); ++n) {
    const InputInfo& t = need(a, n);
    same_dtype(a, 0, n);
    bool ok = t.shape.size() == first.shape.size();
    for (size_t d = 0; ok && d < t.shape.size(); ++d) ok = int64_t(d) == axis || t.shape[d] == first.shape[d];
    if (!ok)
      throw InputError(input_label(a.node, n) + " has shape " + ir::shape_string(t.shape) +
                       ", which does not match " + ir::shape_string(first.shape) +
                       " outside axis " + std::to_string(axis));
    if (__builtin_add_overflow(out[size_t(axis)], t.shape[size_t(axis)], &out[size_t(axis)]))
      throw InputError("the concatenated size does not fit a 64-bit integer");
  }
  return one(out, first.dtype);
}

Outputs infer_split(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), int64_t(x.shape.size()), "axis");
  std::optional<std::vector<int64_t>> sizes;
  if (a.schema.is_shape_input(1)) {
    if (maybe(a, 1)) {
      if (!ints_of(a, 1)) return Outputs(a.node.outputs.size(), OutputInfo{std::nullopt, x.dtype});
      sizes = *ints_of(a, 1);
    }
  } else {
    sizes = attr_ints_opt(a.node, "split");
  }
  const bool v18 = a.node.opset >= 18;
  const auto num = v18 ? attr_int_opt(a.node, "num_outputs") : std::nullopt;
  if (sizes && num) throw InputError("gives both the split input and num_outputs");
  const std::vector<int64_t> s =
      split_sizes(x.shape[size_t(axis)], sizes, num ? *num : int64_t(a.node.outputs.size()),
                  num.has_value(), a.node.outputs.size());
  Outputs out;
  for (int64_t k : s) {
    ir::Shape shape = x.shape;
    shape[size_t(axis)] = k;
    out.push_back(OutputInfo{shape, x.dtype});
  }
  return out;
}

Outputs infer_slice(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (!a.schema.is_shape_input(1)) {  // Slice-1: attributes
    const auto ints = ir::Attribute::Kind::Ints;
    starts = required_attr(a.node, "starts", ints).ints;
    ends = required_attr(a.node, "ends", ints).ints;
    axes = attr_ints_opt(a.node, "axes").value_or(std::vector<int64_t>{});
  } else {
    for (size_t k = 1; k < 5; ++k)
      if (maybe(a, k) && !ints_of(a, k)) return one(std::nullopt, x.dtype);
    starts = *ints_of(a, 1);
    ends = *ints_of(a, 2);
    if (ints_of(a, 3)) axes = *ints_of(a, 3);
    if (ints_of(a, 4)) steps = *ints_of(a, 4);
  }
  if (axes.empty() && !(a.schema.is_shape_input(3) && maybe(a, 3))) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty() && !(a.schema.is_shape_input(4) && maybe(a, 4))) steps.assign(starts.size(), 1);
  ir::Shape out = x.shape;
  for (const SliceAxis& s : slice_ranges(x.shape, starts, ends, axes, steps)) out[size_t(s.axis)] = s.size;
  return one(out, x.dtype);
}

Outputs infer_expand(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  expect_rank(a, 1, 1, 1);
  const auto* s = ints_of(a, 1);
  if (!s) return one(std::nullopt, x.dtype);
  for (int64_t d : *s)
    if (d < 0) throw InputError("target shape " + ir::shape_string(*s) + " holds a negative size");
  const ir::Shape shapes[] = {x.shape, ir::Shape(s->begin(), s->end())};
  return one(broadcast_shapes(shapes, "data and the target shape"), x.dtype);
}

Outputs infer_tile(const ShapeArgs& a) {
  const InputInfo& x = need(a, 0);
  const auto* reps = ints_of(a, 1);
  if (!reps) return one(std::nullopt, x.dtype);
  if (reps->size() != x.shape.size())
    throw InputError("repeats " + ir::shape_string(*reps) + " must have one entry per dimension of " +
                     ir::shape_string(x.shape));
  ir::Shape out = x.shape;
  for (size_t d = 0; d < reps->size(); ++d) {
    if ((*reps)[d] < 0) throw InputError("repeats " + ir::shape_string(*reps) + " hold a negative");
    out[d] = times(out[d], (*reps)[d], "the tiled size");
  }
  return one(out, x.dtype);
}

Outputs infer_constant_of_shape(const ShapeArgs& a) {
  expect_rank(a, 0, 1, 1);
  ir::DType t = ir::DType::Float;
  if (const ir::Attribute* v = attr(a.node, "value", ir::Attribute::Kind::Tensor)) {
    if (!v->tensor || ir::element_count(v->tensor->shape) != 1)
      throw InputError("attribute 'value' must hold one element");
    t = v->tensor->dtype;
  }
  const auto* s = ints_of(a, 0);
  if (!s) return one(std::nullopt, t);
  for (int64_t d : *s)
    if (d < 0) throw InputError("shape " + ir::shape_string(*s) + " holds a negative size");
  return one(ir::Shape(s->begin(), s->end()), t);
}

Outputs infer_range(const ShapeArgs& a) {
  const char* names[] = {"start", "limit", "delta"};
  for (size_t k = 0; k < 3; ++k)
    if (ir::element_count(need(a, k).shape) != 1)
      throw InputError(std::string(names[k]) + " must be a scalar, has shape " +
                       ir::shape_string(need(a, k).shape));
  const auto *s = ints_of(a, 0), *l = ints_of(a, 1), *d = ints_of(a, 2);
  if (!s || !l || !d) return one(std::nullopt, need(a, 0).dtype);  // float bounds: the kernel counts
  if ((*d)[0] == 0) throw InputError("delta is 0");
  // n = max(ceil((limit - start) / delta), 0), in 128 bits so no bound overflows.
  const __int128 span = __int128((*l)[0]) - (*s)[0], step = (*d)[0];
  __int128 n = span / step;
  if (n * step != span && ((span > 0) == (step > 0))) ++n;
  if (n < 0) n = 0;
  if (n > INT64_MAX) throw InputError("Range's element count does not fit a 64-bit integer");
  return one(ir::Shape{int64_t(n)}, need(a, 0).dtype);
}

Outputs infer_trilu(const ShapeArgs& a) {
  expect_rank(a, 0, 2, INT64_MAX);
  if (const InputInfo* k = maybe(a, 1); k && ir::element_count(k->shape) != 1)
    throw InputError("k (input #1) must be a scalar, has shape " + ir::shape_string(k->shape));
  return one(need(a, 0).shape, need(a, 0).dtype);
}

Outputs infer_gather(const ShapeArgs& a) {
  expect_rank(a, 0, 1, INT64_MAX);
  const InputInfo &x = need(a, 0), &ind = need(a, 1);
  if (ind.dtype != ir::DType::Undefined && ind.dtype != ir::DType::Int64 && ind.dtype != ir::DType::Int32)
    throw InputError("indices (input #1) are " + ir::dtype_name(ind.dtype) + "; they must be int32 or int64");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), int64_t(x.shape.size()), "axis");
  if (const auto* idx = ints_of(a, 1)) {
    const int64_t dim = x.shape[size_t(axis)];
    for (int64_t i : *idx)
      if (i < -dim || i >= dim)
        throw InputError("index " + std::to_string(i) + " is out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));
  }
  ir::Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  return one(out, x.dtype);
}

Outputs infer_shape(const ShapeArgs& a) {
  const int64_t r = rank_of(a, 0);
  auto clamp_bound = [r](int64_t b) { return std::clamp<int64_t>(b < 0 ? b + r : b, 0, r); };
  const int64_t start = clamp_bound(attr_int(a.node, "start", 0));
  const int64_t end = clamp_bound(attr_int(a.node, "end", r));
  return one(ir::Shape{std::max<int64_t>(0, end - start)}, ir::DType::Int64);
}

Outputs infer_size(const ShapeArgs&) { return one(ir::Shape{}, ir::DType::Int64); }

Outputs infer_constant(const ShapeArgs& a) {
  using K = ir::Attribute::Kind;
  const ir::Node& n = a.node;
  if (n.attributes.size() != 1)
    throw InputError("must have exactly one attribute, has " + std::to_string(n.attributes.size()));
  if (const ir::Attribute* at = attr(n, "value", K::Tensor)) {
    if (!at->tensor) throw InputError("attribute 'value' holds no tensor");
    return one(at->tensor->shape, at->tensor->dtype);
  }
  if (attr(n, "value_float", K::Float)) return one(ir::Shape{}, ir::DType::Float);
  if (const ir::Attribute* at = attr(n, "value_floats", K::Floats))
    return one(ir::Shape{int64_t(at->floats.size())}, ir::DType::Float);
  if (attr(n, "value_int", K::Int)) return one(ir::Shape{}, ir::DType::Int64);
  if (const ir::Attribute* at = attr(n, "value_ints", K::Ints))
    return one(ir::Shape{int64_t(at->ints.size())}, ir::DType::Int64);
  return one(std::nullopt, ir::DType::Undefined);  // strings, sparse: the kernel says Unsupported
}

}  // namespace onnx_tv::ops::detail
