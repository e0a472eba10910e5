// Comparisons, Where, logical ops and Trilu. Comparisons are decided where the Context can
// decide them (constants, or two identical canonical forms), and on values that depend on one
// integer input alone (a token id against a vocabulary shard's bounds), which give a 0/1 value
// in that input's indicators. Any other comparison on a symbolic value is Unsupported rather
// than guessed. Bool tensors therefore hold only 0/1 values, so logic is arithmetic on them.
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

enum class Cmp { Equal, Less, LessOrEqual, Greater, GreaterOrEqual };

const char* cmp_name(Cmp c) {
  switch (c) {
    case Cmp::Equal: return "Equal";
    case Cmp::Less: return "Less";
    case Cmp::LessOrEqual: return "LessOrEqual";
    case Cmp::Greater: return "Greater";
    case Cmp::GreaterOrEqual: return "GreaterOrEqual";
  }
  return "?";
}

bool holds(Cmp c, int sign) {
  switch (c) {
    case Cmp::Equal: return sign == 0;
    case Cmp::Less: return sign < 0;
    case Cmp::LessOrEqual: return sign <= 0;
    case Cmp::Greater: return sign > 0;
    case Cmp::GreaterOrEqual: return sign >= 0;
  }
  return false;
}

// The comparison on each value of the one integer input x - y depends on, if there is one.
std::optional<Value> compare_integer_function(Context& ctx, Cmp c, Value x, Value y) {
  if (!x.is_finite() || !y.is_finite()) return std::nullopt;
  const std::optional<solver::IntegerFunction> f = ctx.as_integer_function(ctx.sub(x, y));
  if (!f || f->input.empty()) return std::nullopt;
  std::vector<Value> holds_at;
  for (const solver::Rational& d : f->values) holds_at.push_back(holds(c, sgn(d)) ? ctx.one() : ctx.zero());
  return ctx.from_integer_function(f->input, f->lo, holds_at);
}

Value compare_values(Context& ctx, Cmp c, Value x, Value y) {
  std::optional<int> sign;
  if (x == y) sign = 0;  // equal canonical forms are equal functions
  else sign = ctx.compare(x, y);
  if (!sign) sign = ctx.order_of_positions(x, y);  // a causal mask of a shrunk sequence
  if (!sign) {
    if (std::optional<Value> v = compare_integer_function(ctx, c, x, y)) return *v;
    if (ctx.has_position(x) || ctx.has_position(y))
      throw UndecidedPositions(std::string(cmp_name(c)) + " of " + ctx.to_string(x) + " and " +
                        ctx.to_string(y) + " is not decided: it compares positions along a " +
                        "dimension the reduced instance shrinks, and their order alone does " +
                        "not decide it (an offset, a window or a scale; docs/shape-reduction.md, " +
                        "\"Positions\"); --no-reduce checks at full size");
    const bool symbolic = !ctx.is_constant(x) || !ctx.is_constant(y);
    throw Unsupported(std::string(cmp_name(c)) + " of " + ctx.to_string(x) + " and " +
                      ctx.to_string(y) + " is not decided: " +
                      (symbolic ? "the comparison is on a symbolic value"
                                : "the constants are too close to order numerically"));
  }
  return holds(c, *sign) ? ctx.one() : ctx.zero();
}

// A bool tensor of f(x, y) over the broadcast of inputs 0 and 1.
template <class F>
std::vector<Tensor> broadcast_bool(KernelArgs& a, F f) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const Tensor& y = input(a, 1);
  const Shape shapes[] = {x.shape, y.shape};
  Shape out = broadcast_shapes(shapes, input_label(a, 0) + " and " + input_label(a, 1));
  std::vector<int64_t> mx = broadcast_map(x.shape, out), my = broadcast_map(y.shape, out);
  std::vector<Value> data;
  data.reserve(mx.size());
  for (size_t k = 0; k < mx.size(); ++k) data.push_back(f(x.data[mx[k]], y.data[my[k]]));
  return {ir::make_tensor(DType::Bool, std::move(out), std::move(data))};
}

Kernel compare_kernel(Cmp c) {
  return [c](KernelArgs& a) {
    expect_input_count(a, 2, 2);
    common_dtype(a, 0, 1);
    return broadcast_bool(a, [&](Value x, Value y) { return compare_values(a.ctx, c, x, y); });
  };
}

// Where with a constant condition selects Values; a symbolic condition is not modeled here.
std::vector<Tensor> where_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 3);
  const Tensor& cond = input(a, 0);
  const Tensor& x = input(a, 1);
  const Tensor& y = input(a, 2);
  DType t = common_dtype(a, 1, 2);
  const Shape shapes[] = {cond.shape, x.shape, y.shape};
  Shape out = broadcast_shapes(shapes, "condition, X and Y");
  std::vector<int64_t> mc = broadcast_map(cond.shape, out), mx = broadcast_map(x.shape, out),
                       my = broadcast_map(y.shape, out);
  std::vector<Value> data;
  data.reserve(mc.size());
  for (size_t k = 0; k < mc.size(); ++k) {
    Value c = cond.data[mc[k]];
    if (!a.ctx.is_constant(c)) {
      // A bool is 0 or 1 (see above): c x + (1 - c) y, where both sides are finite.
      const Value xv = x.data[mx[k]], yv = y.data[my[k]];
      if (!xv.is_finite() || !yv.is_finite())
        throw Unsupported("Where on the symbolic condition " + a.ctx.to_string(c) +
                          " between infinities is not modeled");
      data.push_back(a.ctx.add(a.ctx.mul(c, xv), a.ctx.mul(a.ctx.sub(a.ctx.one(), c), yv)));
      continue;
    }
    const bool take_x = !(c == a.ctx.zero());
    data.push_back(take_x ? x.data[mx[k]] : y.data[my[k]]);
  }
  return {ir::make_tensor(t, std::move(out), std::move(data))};
}

// Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dimensions.
std::vector<Tensor> trilu_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 2);
  const Tensor& x = input(a, 0);
  if (x.rank() < 2) throw InputError("input must have rank >= 2, has shape " + ir::shape_string(x.shape));
  int64_t k = 0;
  if (const Tensor* kt = optional_input(a, 1)) k = const_int_scalar(a.ctx, *kt, "k (input #1)");
  const bool upper = attr_int(a.node, "upper", 1) != 0;
  const int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
  Tensor out = x;
  for (int64_t p = 0; p < x.size(); ++p) {
    const int64_t j = p % cols, i = (p / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) out.data[p] = a.ctx.zero();
  }
  return {std::move(out)};
}

// Not, And, Or, Xor on 0/1 values, as arithmetic.
std::vector<Tensor> not_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  Tensor out = input(a, 0);
  for (Value& v : out.data) v = a.ctx.sub(a.ctx.one(), v);
  return {std::move(out)};
}

enum class Logic { And, Or, Xor };

Kernel logic_kernel(Logic op) {
  return [op](KernelArgs& a) {
    Context& ctx = a.ctx;
    return broadcast_bool(a, [&](Value p, Value q) {
      const Value pq = ctx.mul(p, q);
      switch (op) {
        case Logic::And: return pq;
        case Logic::Or: return ctx.sub(ctx.add(p, q), pq);
        case Logic::Xor: break;
      }
      return ctx.sub(ctx.add(p, q), ctx.mul(ctx.constant(2), pq));
    });
  };
}

}  // namespace

void add_logic_ops(std::vector<OpSchema>& defs) {
  using enum DimRule;
  const Traits compare{.rule = Broadcast, .algebra = Algebra::Function, .same_types = 0b11,
                       .result = ResultType::Bool, .shape_arith = true, .piecewise = true};
  add_op(defs, "Equal", {11, 13}, compare_kernel(Cmp::Equal), compare);
  add_op(defs, "Less", {9, 13}, compare_kernel(Cmp::Less), compare);
  add_op(defs, "Greater", {9, 13}, compare_kernel(Cmp::Greater), compare);
  add_op(defs, "LessOrEqual", {12, 16}, compare_kernel(Cmp::LessOrEqual), compare);
  add_op(defs, "GreaterOrEqual", {12, 16}, compare_kernel(Cmp::GreaterOrEqual), compare);
  add_op(defs, "Where", {9, 16}, where_kernel,
         {.rule = Broadcast, .algebra = Algebra::Select, .same_types = 0b110,
          .result = ResultType::Input1, .shape_arith = true});
  const Traits logic{.rule = Broadcast, .algebra = Algebra::Function, .same_types = 0b11,
                     .result = ResultType::Bool, .shape_arith = true, .piecewise = true};
  add_op(defs, "Not", {1}, not_kernel, {.rule = Broadcast, .algebra = Algebra::Function,
                                        .result = ResultType::Bool, .shape_arith = true,
                                        .piecewise = true});
  add_op(defs, "And", {7}, logic_kernel(Logic::And), logic);
  add_op(defs, "Or", {7}, logic_kernel(Logic::Or), logic);
  add_op(defs, "Xor", {7}, logic_kernel(Logic::Xor), logic);
  add_op(defs, "Trilu", {14}, trilu_kernel,
         {.rule = Trilu, .algebra = Algebra::Moves, .linearity = Linearity::Joint,
          .shape_inputs = 0b10, .data_inputs = 0b1, .linear_inputs = 0b1});
}

}  // namespace onnx_tv::ops::detail
