// Selections: TopK, ArgMax, ArgMin. Slot j of each row is an integer input of its own over the
// row's indices (solver/selections.cpp), so the indices are that input and the values the row's
// element it picks, sum_e [s_j = e] x_e, like a Gather by a token id. Two such nodes over one
// canonical row share their atoms.
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

// Every slot of every row along `axis`: (indices, values) in the layout of `out`, the input's
// shape with `axis` of extent `k`.
std::pair<std::vector<Value>, std::vector<Value>> select_rows(Context& ctx, const Tensor& x,
                                                              int64_t axis, int64_t k,
                                                              bool largest, bool ties_last,
                                                              const std::string& order = "") {
  const auto [outer, n, inner] = split_at(x.shape, axis);
  std::vector<Value> indices(size_t(outer * k * inner)), values(indices.size());
  solver::Selection s;
  s.k = k;
  s.largest = largest;
  s.ties_last = ties_last;
  s.order = order;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t e = 0; e < inner; ++e) {
      s.row.clear();
      for (int64_t i = 0; i < n; ++i) s.row.push_back(x.data[size_t((o * n + i) * inner + e)]);
      for (int64_t j = 0; j < k; ++j) {
        s.slot = j;
        const Value index = ctx.select(s);
        const size_t at = size_t((o * k + j) * inner + e);
        indices[at] = index;
        if (ctx.is_constant(index)) {
          values[at] = s.row[size_t(*solver::as_int64(*ctx.as_rational(index)))];
        } else {  // the row's element at each value the index takes
          const solver::IntegerFunction f = *ctx.as_integer_function(index);
          std::vector<Value> picks;
          for (const solver::Rational& u : f.values) picks.push_back(s.row[size_t(*solver::as_int64(u))]);
          values[at] = ctx.from_integer_function(f.input, f.lo, picks);
        }
      }
    }
  return {std::move(indices), std::move(values)};
}

std::vector<Tensor> top_k_kernel(KernelArgs& a) {
  const Tensor& x = input(a, 0);
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), x.rank(), "axis");
  const int64_t k = a.node.opset < 10 ? attr_int(a.node, "k", 1)
                                      : const_int_scalar(a.ctx, input(a, 1), "K (input #1)");
  // sorted=0: the runtime orders the results as it likes, so each evaluation has its own order.
  const std::string order = attr_int(a.node, "sorted", 1) == 0 ? a.ctx.fresh_order() : "";
  auto [indices, values] =
      select_rows(a.ctx, x, axis, k, attr_int(a.node, "largest", 1) != 0, false, order);
  Shape out = x.shape;
  out[size_t(axis)] = k;
  return {ir::make_tensor(x.dtype, out, std::move(values)),
          ir::make_tensor(DType::Int64, out, std::move(indices))};
}

Kernel arg_kernel(bool largest) {
  return [largest](KernelArgs& a) {
    const Tensor& x = input(a, 0);
    const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), x.rank(), "axis");
    const bool last = attr_int(a.node, "select_last_index", 0) != 0;
    auto [indices, values] = select_rows(a.ctx, x, axis, 1, largest, last);
    Shape out = x.shape;
    if (attr_int(a.node, "keepdims", 1)) out[size_t(axis)] = 1;
    else out.erase(out.begin() + axis);
    return std::vector<Tensor>{ir::make_tensor(DType::Int64, std::move(out), std::move(indices))};
  };
}

}  // namespace

void add_select_ops(std::vector<OpSchema>& defs) {
  add_op(defs, "TopK", {1, 10, 11}, top_k_kernel,
         {.rule = DimRule::TopK, .algebra = Algebra::Function, .shape_inputs = 0b10,
          .data_inputs = 0b1, .piecewise = true});
  const Traits arg{.rule = DimRule::ArgReduce, .algebra = Algebra::Function,
                   .result = ResultType::Int64, .piecewise = true};
  add_op(defs, "ArgMax", {1, 11, 12, 13}, arg_kernel(true), arg);
  add_op(defs, "ArgMin", {1, 11, 12, 13}, arg_kernel(false), arg);
}

}  // namespace onnx_tv::ops::detail
