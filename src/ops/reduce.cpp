// Reductions. Each output element is one n-ary Context call over the elements it reduces
// (sum, max), so a reduction split across ranks and summed again compares term for term.
#include <functional>

#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

using Reducer = std::function<Value(Context&, DType, std::span<const Value>)>;

// Which axes to reduce, from the attribute (older versions) or input #1 (newer ones).
// nullopt: leave the tensor as it is (noop_with_empty_axes with no axes).
std::optional<std::vector<int64_t>> reduce_axes(KernelArgs& a, bool axes_input) {
  std::optional<std::vector<int64_t>> given;
  if (axes_input)
    if (const Tensor* t = optional_input(a, 1)) given = const_ints(a.ctx, *t, "axes (input #1)");
  return reduce_axes_of(a.node, input(a, 0).rank(), given ? &*given : nullptr, axes_input);
}

std::vector<Tensor> reduce(KernelArgs& a, bool axes_input, const Reducer& f) {
  expect_input_count(a, 1, axes_input ? 2 : 1);
  const Tensor& x = input(a, 0);
  std::optional<std::vector<int64_t>> axes = reduce_axes(a, axes_input);
  if (!axes) return {x};
  const bool keepdims = attr_int(a.node, "keepdims", 1) != 0;

  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t ax : *axes) reduced[ax] = true;
  // The output index of an input element: its index with the reduced dimensions set to 0.
  Shape kept_shape = x.shape, out_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (reduced[d]) kept_shape[d] = 1;
    if (!reduced[d] || keepdims) out_shape.push_back(kept_shape[d]);
  }
  const int64_t n_out = ir::element_count(kept_shape);
  const std::vector<int64_t> out_st = ir::strides(kept_shape);
  std::vector<std::vector<Value>> groups(n_out);
  std::vector<int64_t> idx(x.shape.size(), 0);
  for (int64_t k = 0; k < x.size(); ++k, next_index(idx, x.shape)) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) if (!reduced[d]) o += idx[d] * out_st[d];
    groups[o].push_back(x.data[k]);
  }
  std::vector<Value> out;
  out.reserve(n_out);
  for (const auto& g : groups) out.push_back(f(a.ctx, x.dtype, g));
  return {ir::make_tensor(x.dtype, std::move(out_shape), std::move(out))};
}

Value sum_of(Context& ctx, DType, std::span<const Value> xs) { return ctx.sum(xs); }

// The mean of integers is an integer, rounded toward zero as integer division is.
Value mean_of(Context& ctx, DType t, std::span<const Value> xs) {
  if (xs.empty()) throw InputError("ReduceMean over an empty set of values is undefined");
  const Value m = ctx.mul(ctx.sum(xs), ctx.constant(Rational(1, long(xs.size()))));
  if (!ir::is_integer(t)) return m;
  if (!ctx.is_constant(m))
    throw Unsupported("ReduceMean of symbolic integers (an integer division) is not modeled");
  return ctx.constant(truncate(const_rational(ctx, m, "the mean")));
}

Value sum_square_of(Context& ctx, DType, std::span<const Value> xs) {
  return ctx.dot(xs, xs);
}

// ONNX (opset 18) defines the max of nothing as -inf for float types.
Value max_of(Context& ctx, DType t, std::span<const Value> xs) {
  if (xs.empty()) {
    if (ir::is_float(t)) return Context::neg_inf();
    throw InputError("ReduceMax over an empty set of " + ir::dtype_name(t) + " values");
  }
  return ctx.max(xs);
}

Kernel reduce_kernel(bool axes_input, Reducer f) {
  return [axes_input, f](KernelArgs& a) { return reduce(a, axes_input, f); };
}

// CumSum: prefix sums along the axis (input #1), from the far end with `reverse`, without the
// element itself with `exclusive`. Each is one n-ary sum, as a reduction's are.
std::vector<Tensor> cum_sum_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  if (x.rank() == 0) throw InputError("input must have rank >= 1, has a scalar");
  const int64_t axis = normalize_axis(const_int_scalar(a.ctx, input(a, 1), "axis (input #1)"),
                                      x.rank(), "axis");
  const bool exclusive = attr_int(a.node, "exclusive", 0) != 0;
  const bool reverse = attr_int(a.node, "reverse", 0) != 0;
  const int64_t n = x.shape[size_t(axis)];
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  Tensor out = x;
  std::vector<Value> prefix;
  for (int64_t base = 0; base < x.size(); base += n * inner)
    for (int64_t i = 0; i < inner; ++i) {
      prefix.clear();
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = reverse ? n - 1 - s : s;
        const int64_t at = base + k * inner + i;
        if (!exclusive) prefix.push_back(x.data[size_t(at)]);
        out.data[size_t(at)] = prefix.empty() ? a.ctx.zero() : a.ctx.sum(prefix);
        if (exclusive) prefix.push_back(x.data[size_t(at)]);
      }
    }
  return {std::move(out)};
}

}  // namespace

void add_reduce_ops(std::vector<OpSchema>& defs) {
  using enum Algebra;
  // From ReduceSum-13 and the others' revision 18 the axes are input #1.
  auto traits = [](Algebra alg, bool axes_input, bool exact) {
    return Traits{.rule = DimRule::Reduce, .algebra = alg,
                  .linearity = alg == SumReduction ? Linearity::Joint : Linearity::None,
                  .shape_inputs = axes_input ? 0b10u : 0u, .data_inputs = 0b1,
                  .linear_inputs = 0b1, .shape_arith = exact};
  };
  add_op(defs, "ReduceSum", {1, 11}, reduce_kernel(false, sum_of), traits(SumReduction, false, true));
  add_op(defs, "ReduceSum", {13}, reduce_kernel(true, sum_of), traits(SumReduction, true, true));
  add_op(defs, "ReduceMean", {1, 11, 13}, reduce_kernel(false, mean_of), traits(SumReduction, false, false));
  add_op(defs, "ReduceMean", {18}, reduce_kernel(true, mean_of), traits(SumReduction, true, false));
  add_op(defs, "ReduceMax", {1, 11, 12, 13}, reduce_kernel(false, max_of), traits(Function, false, true));
  add_op(defs, "ReduceMax", {18}, reduce_kernel(true, max_of), traits(Function, true, true));
  add_op(defs, "ReduceSumSquare", {1, 11, 13}, reduce_kernel(false, sum_square_of),
         traits(Reduction, false, false));
  add_op(defs, "ReduceSumSquare", {18}, reduce_kernel(true, sum_square_of), traits(Reduction, true, false));
  add_op(defs, "CumSum", {11, 14}, cum_sum_kernel,
         {.rule = DimRule::CumSum, .algebra = Reduction, .linearity = Linearity::Joint,
          .shape_inputs = 0b10, .data_inputs = 0b1, .linear_inputs = 0b1});
}

}  // namespace onnx_tv::ops::detail
