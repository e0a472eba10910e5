// Elementwise arithmetic and the unary functions: each output element is one Context call on
// the broadcast input elements, so the canonical forms do all the algebra.
#include <algorithm>
#include <functional>

#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

using BinaryFn = std::function<Value(Value, Value)>;
using UnaryFn = std::function<Value(Value)>;

// Inputs 0 and 1 broadcast against each other, combined by f.
Tensor broadcast_binary(KernelArgs& a, DType out_dtype, const BinaryFn& f) {
  const Tensor& x = input(a, 0);
  const Tensor& y = input(a, 1);
  const Shape ys = a.node.opset < 7 ? legacy_rhs_shape(a.node, x.shape, y.shape) : y.shape;
  const Shape shapes[] = {x.shape, ys};
  Shape out = broadcast_shapes(shapes, input_label(a, 0) + " and " + input_label(a, 1));
  std::vector<int64_t> mx = broadcast_map(x.shape, out), my = broadcast_map(ys, out);
  std::vector<Value> data;
  data.reserve(mx.size());
  for (size_t k = 0; k < mx.size(); ++k) data.push_back(f(x.data[mx[k]], y.data[my[k]]));
  return ir::make_tensor(out_dtype, std::move(out), std::move(data));
}

Kernel binary_kernel(Value (Context::*op)(Value, Value)) {
  return [op](KernelArgs& a) {
    expect_input_count(a, 2, 2);
    DType t = common_dtype(a, 0, 1);
    Context& ctx = a.ctx;
    const std::string& name = a.node.op_type;
    return std::vector<Tensor>{broadcast_binary(a, t, [&ctx, op, t, &name](Value x, Value y) {
      return wrap_result(ctx, (ctx.*op)(x, y), t, name);
    })};
  };
}

// Integer Div truncates toward zero (C semantics, as ONNX Runtime does); it is decided on
// constants, and on a dividend that depends on one integer input with a constant divisor (a
// token id divided by a shard size), value by value; any other symbolic quotient has no
// polynomial form.
std::vector<Tensor> div_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  DType t = common_dtype(a, 0, 1);
  Context& ctx = a.ctx;
  if (!ir::is_integer(t)) {
    return {broadcast_binary(a, t, [&ctx](Value x, Value y) { return ctx.div(x, y); })};
  }
  return {broadcast_binary(a, t, [&ctx](Value x, Value y) {
    if (ctx.is_constant(y) && !ctx.is_constant(x)) {
      const Rational d = const_rational(ctx, y, "integer divisor");
      if (const auto f = ctx.as_integer_function(x); f && sgn(d) != 0) {
        std::vector<Value> at;
        for (const Rational& q : f->values) at.push_back(ctx.constant(truncate(Rational(q / d))));
        return ctx.from_integer_function(f->input, f->lo, at);
      }
    }
    if (!ctx.is_constant(x) || !ctx.is_constant(y)) {
      throw Unsupported("integer Div of a symbolic value (" + ctx.to_string(x) + " / " +
                        ctx.to_string(y) + ") is not modeled");
    }
    Rational q = const_rational(ctx, ctx.div(x, y), "integer quotient");
    return ctx.constant(truncate(q));
  })};
}

// An integer x^y: a natural power stays an integer; any other is truncated toward zero, as
// ONNX Runtime computes it, where each value of x gives a rational power (a constant, or each
// value of the integer input x depends on).
Value integer_pow(Context& ctx, Value x, Value y) {
  const std::optional<Rational> e = ctx.as_rational(y);
  if (e && e->get_den() == 1 && *e >= 0) return ctx.pow(x, y);
  const auto f = ctx.as_integer_function(x);
  if (!f) {
    throw Unsupported("integer Pow of " + ctx.to_string(x) + " to " + ctx.to_string(y) +
                      " is not modeled (its result is truncated)");
  }
  std::vector<Value> at;
  for (const Rational& q : f->values) {
    const std::optional<Rational> p = ctx.as_rational(ctx.pow(ctx.constant(q), y));
    if (!p) {
      throw Unsupported("integer Pow " + solver::to_string(q) + "^" + ctx.to_string(y) +
                        " is irrational; its truncation is not modeled");
    }
    at.push_back(ctx.constant(truncate(*p)));
  }
  return ctx.from_integer_function(f->input, f->lo, at);
}

// The exponent must be constant: x^y with symbolic y has no canonical form in the engine.
std::vector<Tensor> pow_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  Context& ctx = a.ctx;
  const DType t = input(a, 0).dtype;
  return {broadcast_binary(a, t, [&ctx, t](Value x, Value y) {
    if (!ctx.is_constant(y)) {
      throw Unsupported("Pow with the symbolic exponent " + ctx.to_string(y) +
                        " is not modeled; the exponent must be a constant");
    }
    return ir::is_integer(t) ? integer_pow(ctx, x, y) : ctx.pow(x, y);
  })};
}

Kernel unary_kernel(Value (Context::*op)(Value)) {
  return [op](KernelArgs& a) {
    expect_input_count(a, 1, 1);
    const Tensor& x = input(a, 0);
    Tensor out{x.dtype, x.shape, {}};
    out.data.reserve(x.data.size());
    for (Value v : x.data) out.data.push_back(wrap_result(a.ctx, (a.ctx.*op)(v), x.dtype, a.node.op_type));
    return std::vector<Tensor>{std::move(out)};
  };
}

// Max, Min, Sum and Mean over any number of inputs, broadcast together (opset 8 on; before,
// the shapes had to be equal). Max and Min stay max/min atoms on symbolic values.
Kernel variadic_kernel(const std::string& op) {
  return [op](KernelArgs& a) {
    expect_input_count(a, 1, SIZE_MAX);
    std::vector<Shape> shapes;
    DType t = input(a, 0).dtype;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      shapes.push_back(input(a, i).shape);
      t = common_dtype(a, 0, i);
      if (a.node.opset < 8 && shapes.back() != shapes.front()) {
        throw InputError(input_label(a, i) + " has shape " + ir::shape_string(shapes.back()) +
                         ", but before opset 8 every input must have shape " +
                         ir::shape_string(shapes.front()));
      }
    }
    Shape out = broadcast_shapes(shapes, "the inputs");
    std::vector<std::vector<int64_t>> maps;
    for (const Shape& s : shapes) maps.push_back(broadcast_map(s, out));
    Context& ctx = a.ctx;
    const Value count = ctx.constant((long long)a.inputs.size());
    std::vector<Value> data, args(a.inputs.size());
    for (size_t k = 0; k < maps[0].size(); ++k) {
      for (size_t i = 0; i < args.size(); ++i) args[i] = input(a, i).data[maps[i][k]];
      if (op == "Max") data.push_back(ctx.max(args));
      else if (op == "Min") data.push_back(ctx.min(args));
      else if (op == "Sum") data.push_back(wrap_result(ctx, ctx.sum(args), t, op));
      else data.push_back(ctx.div(ctx.sum(args), count));
    }
    return std::vector<Tensor>{ir::make_tensor(t, std::move(out), std::move(data))};
  };
}

}  // namespace

void add_elementwise_ops(std::vector<OpSchema>& defs) {
  constexpr DimRule Broadcast = DimRule::Broadcast;
  using enum Algebra;
  using enum Linearity;
  constexpr uint32_t both = 0b11, all = ~0u;
  // Opset 6 (Pow: 1) is the legacy broadcast of legacy_rhs_shape; older revisions differ more.
  const std::vector<int> binary = {6, 7, 13, 14};
  add_op(defs, "Add", binary, binary_kernel(&Context::add),
         {.rule = Broadcast, .algebra = Sum, .linearity = Joint, .same_types = both, .shape_arith = true});
  add_op(defs, "Sub", binary, binary_kernel(&Context::sub),
         {.rule = Broadcast, .algebra = Difference, .linearity = Joint, .same_types = both, .shape_arith = true});
  add_op(defs, "Mul", binary, binary_kernel(&Context::mul),
         {.rule = Broadcast, .algebra = Product, .linearity = EachAlone, .same_types = both, .shape_arith = true});
  add_op(defs, "Div", binary, div_kernel,
         {.rule = Broadcast, .algebra = Quotient, .linearity = EachAlone, .linear_inputs = 0b1,
          .same_types = both, .shape_arith = true});
  add_op(defs, "Pow", {1, 7, 12, 13, 15}, pow_kernel, {.rule = Broadcast, .algebra = Power});
  add_op(defs, "Neg", {6, 13}, unary_kernel(&Context::neg),
         {.rule = Broadcast, .algebra = Affine, .linearity = Joint, .shape_arith = true});
  const Traits exact_function{.rule = Broadcast, .algebra = Function, .shape_arith = true};
  const Traits kink{.rule = Broadcast, .algebra = Function, .shape_arith = true, .piecewise = true};
  const Traits function{.rule = Broadcast, .algebra = Function};
  add_op(defs, "Sqrt", {6, 13}, unary_kernel(&Context::sqrt), exact_function);
  add_op(defs, "Reciprocal", {6, 13}, unary_kernel(&Context::recip), exact_function);
  add_op(defs, "Abs", {6, 13}, unary_kernel(&Context::abs), kink);
  add_op(defs, "Exp", {6, 13}, unary_kernel(&Context::exp), function);
  add_op(defs, "Log", {6, 13}, unary_kernel(&Context::log), function);
  add_op(defs, "Tanh", {6, 13}, unary_kernel(&Context::tanh), function);
  add_op(defs, "Erf", {9, 13}, unary_kernel(&Context::erf), function);
  // In-graph RoPE tables take Sin and Cos of constant angles: they stay exact atoms.
  add_op(defs, "Sin", {7}, unary_kernel(&Context::sin), function);
  add_op(defs, "Cos", {7}, unary_kernel(&Context::cos), function);
  add_op(defs, "Sigmoid", {6, 13}, unary_kernel(&Context::sigmoid), function);
  add_op(defs, "Relu", {6, 13, 14}, unary_kernel(&Context::relu),
         {.rule = Broadcast, .algebra = Function, .piecewise = true});
  for (const char* op : {"Max", "Min"})
    add_op(defs, op, {6, 8, 12, 13}, variadic_kernel(op),
           {.rule = Broadcast, .algebra = Function, .same_types = all, .shape_arith = true,
            .piecewise = true});
  add_op(defs, "Sum", {6, 8, 13}, variadic_kernel("Sum"),
         {.rule = Broadcast, .algebra = Sum, .linearity = Joint, .same_types = all});
  add_op(defs, "Mean", {6, 8, 13}, variadic_kernel("Mean"),
         {.rule = Broadcast, .algebra = Affine, .linearity = Joint, .same_types = all});
}

}  // namespace onnx_tv::ops::detail
