// Neural-network ops with a fixed decomposition: Softmax, LogSoftmax, LayerNormalization, and
// Dropout in inference. Each is computed exactly as its ONNX function body would be, so the
// canonical forms make it equal to the decompositions exporters emit instead of the fused op.
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

// The groups a (Log)Softmax normalizes: from opset 13 the single `axis` (default -1); before,
// the input is coerced to 2-D at `axis` (default 1) and each row is one group.
AxisSplit softmax_groups(const Tensor& x, const ir::Node& node, bool single_axis) {
  const int64_t axis =
      normalize_axis(attr_int(node, "axis", single_axis ? -1 : 1), x.rank(), "axis");
  if (single_axis) return split_at(x.shape, axis);
  return {product(x.shape, 0, axis), product(x.shape, axis, x.shape.size()), 1};
}

// y = e / sum(e) with e = exp(x - max(x)); log: y = (x - max(x)) - log(sum(e)).
Kernel softmax_kernel(bool log, bool single_axis) {
  return [log, single_axis](KernelArgs& a) {
    expect_input_count(a, 1, 1);
    const Tensor& x = input(a, 0);
    const AxisSplit g = softmax_groups(x, a.node, single_axis);
    if (x.size() == 0) return std::vector<Tensor>{x};  // no groups, and no max of nothing
    Context& ctx = a.ctx;
    Tensor out{x.dtype, x.shape, x.data};
    std::vector<Value> group(g.n), shifted(g.n), e(g.n);
    for (int64_t o = 0; o < g.outer; ++o) {
      for (int64_t k = 0; k < g.inner; ++k) {
        auto at = [&](int64_t i) { return (o * g.n + i) * g.inner + k; };
        for (int64_t i = 0; i < g.n; ++i) group[i] = x.data[at(i)];
        const Value m = ctx.max(group);
        for (int64_t i = 0; i < g.n; ++i) {
          shifted[i] = ctx.sub(group[i], m);
          e[i] = ctx.exp(shifted[i]);
        }
        const Value s = ctx.sum(e);
        const Value log_s = log ? ctx.log(s) : Value{};
        for (int64_t i = 0; i < g.n; ++i) {
          out.data[at(i)] = log ? ctx.sub(shifted[i], log_s) : ctx.div(e[i], s);
        }
      }
    }
    return std::vector<Tensor>{std::move(out)};
  };
}

// LayerNormalization-17 over the dimensions [axis, rank): its function body, step for step.
// Outputs Y, Mean and InvStdDev (the last two with the reduced dimensions kept as 1).
std::vector<Tensor> layer_norm_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 3);
  const Tensor& x = input(a, 0);
  if (x.rank() == 0) throw InputError("X must have rank >= 1");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), x.rank(), "axis");
  const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
  const Tensor scale = broadcast_to(input(a, 1), norm_shape, "Scale (" + input_label(a, 1) + ")");
  std::optional<Tensor> bias;
  if (const Tensor* b = optional_input(a, 2)) {
    bias = broadcast_to(*b, norm_shape, "B (" + input_label(a, 2) + ")");
  }
  Context& ctx = a.ctx;
  const Value eps = attr_float(ctx, a.node, "epsilon", 1e-5f);
  const int64_t outer = product(x.shape, 0, axis), n = ir::element_count(norm_shape);
  if (n == 0) throw InputError("normalizes over no elements (shape " + ir::shape_string(x.shape) + ")");
  const Value inv_n = ctx.constant(Rational(1, long(n)));

  Shape stat_shape = x.shape;
  for (size_t d = axis; d < stat_shape.size(); ++d) stat_shape[d] = 1;
  Tensor y{x.dtype, x.shape, x.data};
  Tensor mean_t{DType::Float, stat_shape, {}}, inv_t{DType::Float, stat_shape, {}};
  std::vector<Value> d(n);
  for (int64_t o = 0; o < outer; ++o) {
    std::span<const Value> row(x.data.data() + o * n, n);
    const Value mean = ctx.mul(ctx.sum(row), inv_n);
    for (int64_t i = 0; i < n; ++i) d[i] = ctx.sub(row[i], mean);
    const Value var = ctx.mul(ctx.dot(d, d), inv_n);
    const Value inv_std = ctx.recip(ctx.sqrt(ctx.add(var, eps)));
    for (int64_t i = 0; i < n; ++i) {
      Value v = ctx.mul(ctx.mul(d[i], inv_std), scale.data[i]);
      y.data[o * n + i] = bias ? ctx.add(v, bias->data[i]) : v;
    }
    mean_t.data.push_back(mean);
    inv_t.data.push_back(inv_std);
  }
  return {std::move(y), std::move(mean_t), std::move(inv_t)};
}

// Dropout in inference is the identity with an all-true mask. Training mode draws random
// numbers, which is not a function of the inputs, so it is not modeled.
std::vector<Tensor> dropout_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 3);
  const Tensor& x = input(a, 0);
  if (const Tensor* t = optional_input(a, 2)) {
    if (t->size() != 1) {
      throw InputError("training_mode must be a scalar, has shape " + ir::shape_string(t->shape));
    }
    Value v = t->data[0];
    if (!a.ctx.is_constant(v)) {
      throw Unsupported("Dropout with a symbolic training_mode is not modeled");
    }
    // Training mode drops elements at random, except with ratio 0, which keeps them all.
    const Tensor* ratio = optional_input(a, 1);
    const bool keeps_all = ratio && ratio->size() == 1 && ratio->data[0] == a.ctx.zero();
    if (!(v == a.ctx.zero()) && !keeps_all)
      throw Unsupported("Dropout in training mode is not modeled (its mask is random)");
  }
  Tensor mask{DType::Bool, x.shape, std::vector<Value>(x.data.size(), a.ctx.one())};
  return {x, std::move(mask)};
}

}  // namespace

void add_nn_ops(std::vector<OpSchema>& defs) {
  const Traits softmax{.rule = DimRule::SameShape, .algebra = Algebra::Function};
  add_op(defs, "Softmax", {1, 11}, softmax_kernel(false, false), softmax);
  add_op(defs, "Softmax", {13}, softmax_kernel(false, true), softmax);
  add_op(defs, "LogSoftmax", {1, 11}, softmax_kernel(true, false), softmax);
  add_op(defs, "LogSoftmax", {13}, softmax_kernel(true, true), softmax);
  add_op(defs, "LayerNormalization", {17}, layer_norm_kernel,
         {.rule = DimRule::LayerNorm, .algebra = Algebra::Norm});
  add_op(defs, "Dropout", {7, 10, 12, 13}, dropout_kernel,
         {.rule = DimRule::SameShape, .algebra = Algebra::Affine, .data_inputs = 0b1});
}

}  // namespace onnx_tv::ops::detail
