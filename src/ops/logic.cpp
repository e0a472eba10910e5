// Comparisons, Where and Trilu. Comparisons are decided only where the Context can decide them
// (constants, or two identical canonical forms); a comparison on a symbolic value would need
// the boolean layer and is reported as Unsupported rather than guessed.
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

Value compare_values(Context& ctx, Cmp c, Value x, Value y) {
  std::optional<int> sign;
  if (x == y) sign = 0;  // equal canonical forms are equal functions
  else sign = ctx.compare(x, y);
  if (!sign) {
    const bool symbolic = !ctx.is_constant(x) || !ctx.is_constant(y);
    throw Unsupported(std::string(cmp_name(c)) + " of " + ctx.to_string(x) + " and " +
                      ctx.to_string(y) + " is not decided: " +
                      (symbolic ? "the comparison is on a symbolic value"
                                : "the constants are too close to order numerically"));
  }
  return holds(c, *sign) ? ctx.one() : ctx.zero();
}

Kernel compare_kernel(Cmp c) {
  return [c](KernelArgs& a) {
    expect_input_count(a, 2, 2);
    common_dtype(a, 0, 1);
    const Tensor& x = input(a, 0);
    const Tensor& y = input(a, 1);
    const Shape shapes[] = {x.shape, y.shape};
    Shape out = broadcast_shapes(shapes, input_label(a, 0) + " and " + input_label(a, 1));
    std::vector<int64_t> mx = broadcast_map(x.shape, out), my = broadcast_map(y.shape, out);
    std::vector<Value> data;
    data.reserve(mx.size());
    for (size_t k = 0; k < mx.size(); ++k) {
      data.push_back(compare_values(a.ctx, c, x.data[mx[k]], y.data[my[k]]));
    }
    return std::vector<Tensor>{ir::make_tensor(DType::Bool, std::move(out), std::move(data))};
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
      throw Unsupported("Where on the symbolic condition " + a.ctx.to_string(c) +
                        " is not modeled (a comparison on a symbolic value)");
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
  add_op(defs, "Trilu", {14}, trilu_kernel,
         {.rule = Trilu, .algebra = Algebra::Moves, .linearity = Linearity::Joint,
          .shape_inputs = 0b10, .data_inputs = 0b1, .linear_inputs = 0b1});
}

}  // namespace onnx_tv::ops::detail
