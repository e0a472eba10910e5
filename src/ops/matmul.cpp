// Contractions: MatMul, Gemm, Einsum. Each output element is one n-ary Context::dot (or sum), not
// a chain of adds, so it is a single merge and sharded sums can be compared term for term.
#include <algorithm>
#include <map>

#include "ops/infer_detail.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

// numpy matmul: 1-D operands get a dimension prepended (A) or appended (B) that is dropped
// from the result; the batch dimensions broadcast.
std::vector<Tensor> matmul_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& A = input(a, 0);
  const Tensor& B = input(a, 1);
  DType t = common_dtype(a, 0, 1);
  if (A.rank() == 0 || B.rank() == 0) {
    throw InputError("operands must have rank >= 1, got shapes " + ir::shape_string(A.shape) +
                     " and " + ir::shape_string(B.shape));
  }
  Shape as = A.shape, bs = B.shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) {
    throw InputError("inner dimensions differ: " + input_label(a, 0) + " has shape " +
                     ir::shape_string(A.shape) + ", " + input_label(a, 1) + " has shape " +
                     ir::shape_string(B.shape));
  }
  const Shape batch_a(as.begin(), as.end() - 2), batch_b(bs.begin(), bs.end() - 2);
  const Shape batches[] = {batch_a, batch_b};
  Shape out_shape = broadcast_shapes(batches, "batch dimensions of the operands");
  std::vector<int64_t> ma = broadcast_map(batch_a, out_shape), mb = broadcast_map(batch_b, out_shape);
  if (!a_vec) out_shape.push_back(M);
  if (!b_vec) out_shape.push_back(N);

  std::vector<Value> out, col(K);
  out.reserve(ma.size() * M * N);
  for (size_t p = 0; p < ma.size(); ++p) {
    const Value* abase = A.data.data() + ma[p] * M * K;
    const Value* bbase = B.data.data() + mb[p] * K * N;
    for (int64_t i = 0; i < M; ++i) {
      std::span<const Value> row(abase + i * K, K);
      for (int64_t j = 0; j < N; ++j) {
        for (int64_t k = 0; k < K; ++k) col[k] = bbase[k * N + j];
        out.push_back(a.ctx.dot(row, col));
      }
    }
  }
  return {ir::make_tensor(t, std::move(out_shape), std::move(out))};
}

// Y = alpha * A' B' + beta * C, with C broadcast unidirectionally to (M, N).
std::vector<Tensor> gemm_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 3);
  const Tensor& A = input(a, 0);
  const Tensor& B = input(a, 1);
  const Tensor* C = optional_input(a, 2);
  DType t = common_dtype(a, 0, 1);
  if (A.rank() != 2 || B.rank() != 2) {
    throw InputError("A and B must be 2-D, got shapes " + ir::shape_string(A.shape) + " and " +
                     ir::shape_string(B.shape));
  }
  const bool ta = attr_int(a.node, "transA", 0) != 0, tb = attr_int(a.node, "transB", 0) != 0;
  const int64_t M = ta ? A.shape[1] : A.shape[0], K = ta ? A.shape[0] : A.shape[1];
  const int64_t KB = tb ? B.shape[1] : B.shape[0], N = tb ? B.shape[0] : B.shape[1];
  if (K != KB) {
    throw InputError("inner dimensions differ: A has shape " + ir::shape_string(A.shape) +
                     (ta ? " (transposed)" : "") + ", B has shape " + ir::shape_string(B.shape) +
                     (tb ? " (transposed)" : ""));
  }
  Context& ctx = a.ctx;
  const Value alpha = attr_float(ctx, a.node, "alpha", 1.0f);
  const Value beta = attr_float(ctx, a.node, "beta", 1.0f);
  const bool alpha_one = alpha == ctx.one(), beta_one = beta == ctx.one();
  std::optional<Tensor> c;
  if (C) c = broadcast_to(*C, {M, N}, "C (" + input_label(a, 2) + ")");

  std::vector<Value> out, row(K), col(K);
  out.reserve(M * N);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t k = 0; k < K; ++k) row[k] = ta ? A.data[k * A.shape[1] + i] : A.data[i * K + k];
    for (int64_t j = 0; j < N; ++j) {
      for (int64_t k = 0; k < K; ++k) col[k] = tb ? B.data[j * K + k] : B.data[k * N + j];
      Value y = ctx.dot(row, col);
      if (!alpha_one) y = ctx.mul(alpha, y);
      if (c) {
        Value cv = c->data[i * N + j];
        y = ctx.add(y, beta_one ? cv : ctx.mul(beta, cv));
      }
      out.push_back(y);
    }
  }
  return {ir::make_tensor(t, {M, N}, std::move(out))};
}

std::vector<Tensor> einsum_kernel(KernelArgs& a) {
  const std::string raw = required_attr(a.node, "equation", ir::Attribute::Kind::String).s;
  std::vector<Shape> shapes;
  for (size_t n = 0; n < a.inputs.size(); ++n) shapes.push_back(input(a, n).shape);
  const EinsumPlan plan = plan_einsum(raw, shapes);
  const std::vector<std::vector<int>>& dims_of = plan.dims_of;
  const std::vector<int>& out_labels = plan.out_labels;
  const std::vector<int>& sum_labels = plan.sum_labels;
  const size_t operands = shapes.size();
  Shape out_shape = plan.out_shape;
  const Shape& sum_shape = plan.sum_shape;
  std::vector<int64_t> val(kEllipsisBase + plan.ellipsis_rank, 0);  // each label's index
  std::vector<std::vector<int64_t>> st(operands);
  for (size_t n = 0; n < operands; ++n) st[n] = ir::strides(input(a, n).shape);
  auto element = [&](size_t n) {
    const Tensor& x = *a.inputs[n];
    int64_t off = 0;
    for (size_t d = 0; d < dims_of[n].size(); ++d) {
      if (x.shape[d] != 1) off += val[dims_of[n][d]] * st[n][d];  // size 1 broadcasts
    }
    return x.data[off];
  };

  Context& ctx = a.ctx;
  const int64_t n_out = ir::element_count(out_shape), n_sum = ir::element_count(sum_shape);
  std::vector<Value> out;
  out.reserve(n_out);
  std::vector<int64_t> oi(out_shape.size(), 0), si(sum_shape.size(), 0);
  std::vector<Value> lhs_vals, rhs_vals;
  for (int64_t o = 0; o < n_out; ++o, next_index(oi, out_shape)) {
    for (size_t i = 0; i < oi.size(); ++i) val[out_labels[i]] = oi[i];
    lhs_vals.clear();
    rhs_vals.clear();
    std::fill(si.begin(), si.end(), 0);
    for (int64_t s = 0; s < n_sum; ++s, next_index(si, sum_shape)) {
      for (size_t i = 0; i < si.size(); ++i) val[sum_labels[i]] = si[i];
      if (operands == 2) {
        lhs_vals.push_back(element(0));
        rhs_vals.push_back(element(1));
      } else {
        Value p = element(0);
        for (size_t n = 1; n < operands; ++n) p = ctx.mul(p, element(n));
        lhs_vals.push_back(p);
      }
    }
    out.push_back(operands == 2 ? ctx.dot(lhs_vals, rhs_vals) : ctx.sum(lhs_vals));
  }
  return {ir::make_tensor(input(a, 0).dtype, std::move(out_shape), std::move(out))};
}

}  // namespace

void add_matmul_ops(std::vector<OpSchema>& defs) {
  using enum DimRule;
  add_op(defs, "MatMul", {1, 9, 13}, matmul_kernel,
         {.rule = MatMul, .algebra = Algebra::Contraction, .same_types = 0b11});
  // Gemm-6's `broadcast` attribute allowed what numpy broadcasting of C to [M, N] does.
  add_op(defs, "Gemm", {6, 7, 9, 11, 13}, gemm_kernel,
         {.rule = Gemm, .algebra = Algebra::Contraction, .same_types = 0b11});
  add_op(defs, "Einsum", {12}, einsum_kernel,
         {.rule = Einsum, .algebra = Algebra::Contraction, .same_types = ~0u});
}

}  // namespace onnx_tv::ops::detail
