#include "check/counted_sums.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/errors.h"
#include "common/limits.h"
#include "solver/common_monomial.h"

namespace onnx_tv::check {

namespace {

// The slices of a tensor along an axis: the flat index of each slice's first element, and the
// stride between its elements.
struct Slices {
  std::vector<int64_t> starts;
  int64_t stride = 1, length = 0;
};

Slices slices_of(const ir::Tensor& t, size_t axis) {
  Slices s;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  s.stride = inner;
  s.length = t.shape[axis];
  const int64_t outer = int64_t(t.data.size()) / std::max<int64_t>(s.length * inner, 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) s.starts.push_back(o * s.length * inner + i);
  return s;
}

// What a node adds up along its axis, for an element of its data: the element (ReduceSum,
// ReduceMean), its square (ReduceSumSquare), its exponential (Softmax, LogSoftmax: exp(x - m)
// is exp(x) times a factor every position shares, and exp(log(x + 1)) is x + 1); nullopt where
// it cannot be built (taken to count).
using Addend = std::optional<solver::Value> (*)(solver::Context&, solver::Value);

std::optional<solver::Value> itself(solver::Context&, solver::Value v) { return v; }
std::optional<solver::Value> squared(solver::Context& ctx, solver::Value v) {
  return ctx.mul(v, v);
}
std::optional<solver::Value> exponential(solver::Context& ctx, solver::Value v) {
  try {
    return ctx.exp(v);
  } catch (const MathError&) {
    return std::nullopt;
  }
}

Addend addend_of(const ir::Node& n) {
  if (n.op_type == "ReduceSumSquare") return squared;
  if (n.op_type == "Softmax" || n.op_type == "LogSoftmax") return exponential;
  return itself;
}

// Whether some slice of `t` along `axis` holds addends with a term at every position.
bool counts_along(solver::Context& ctx, const ir::Tensor& t, size_t axis, Addend addend,
                  const ProofForm& form) {
  if (axis >= t.shape.size() || t.shape[axis] < 2 || t.data.empty()) return false;
  const Slices s = slices_of(t, axis);
  for (int64_t start : s.starts) {
    std::vector<solver::Value> raw;
    for (int64_t k = 0; k < s.length; ++k) {
      const std::optional<solver::Value> a = addend(ctx, t.data[size_t(start + k * s.stride)]);
      if (!a) return true;
      raw.push_back(*a);
    }
    if (!form.may_share(ctx, raw)) continue;
    bool counts = true;
    solver::CommonTerms common(ctx, true);
    for (int64_t k = 0; k < s.length && counts; ++k) {
      // An addend out of reach in the proof's form counts (nullopt).
      const std::optional<solver::Value> v = form.of(ctx, raw[size_t(k)], limits::kProofFormBudget);
      if (!v) return true;
      counts = common.add(*v);
    }
    if (counts) return true;
  }
  return false;
}

// Whether, for some pair of slices of `a` along `ax` and of `b` along `bx` that a contraction
// multiplies, the products along the axis hold a term at every position. Slices of operands of
// one rank with the same leading (batch) dimensions pair by batch; otherwise every pair is
// tried, more than the contraction multiplies, which can only find more. `budget` bounds the
// products of terms examined; past it the site is taken to count.
bool products_count(solver::Context& ctx, const ir::Tensor& a, size_t ax, const ir::Tensor& b,
                    size_t bx, size_t& budget, const ProofForm& form) {
  if (ax >= a.shape.size() || bx >= b.shape.size() || a.data.empty() || b.data.empty())
    return false;
  if (a.shape[ax] != b.shape[bx]) return true;  // not the contraction inference saw: keep it
  if (a.shape[ax] < 2) return false;
  const Slices sa = slices_of(a, ax), sb = slices_of(b, bx);
  const size_t r = a.shape.size();
  const bool batched = r >= 3 && b.shape.size() == r &&
                       std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin());
  int64_t batches = 1;
  if (batched)
    for (size_t d = 0; d + 2 < r; ++d) batches *= a.shape[d];
  const size_t per_a = sa.starts.size() / size_t(batches), per_b = sb.starts.size() / size_t(batches);
  std::vector<solver::Value> xs(size_t(sa.length)), ys(size_t(sa.length));
  for (size_t i = 0; i < sa.starts.size(); ++i) {
    const size_t batch = batched ? i / per_a : 0;
    const size_t from = batched ? batch * per_b : 0, to = batched ? from + per_b : sb.starts.size();
    for (int64_t k = 0; k < sa.length; ++k) xs[size_t(k)] = a.data[size_t(sa.starts[i] + k * sa.stride)];
    for (size_t j = from; j < to; ++j) {
      for (int64_t k = 0; k < sa.length; ++k)
        ys[size_t(k)] = b.data[size_t(sb.starts[j] + k * sb.stride)];
      // In the form as built, the products are examined without storing them: deep in a large
      // plan they would outgrow the rest of the run.
      if (form.is_built_form()) {
        const std::optional<bool> shared = ctx.products_share_a_term(xs, ys, budget);
        if (!shared || *shared) return true;
        continue;
      }
      // Where their bounds leave no monomial in common in the proof's form, nothing is built.
      const std::optional<bool> may = form.products_may_share(ctx, xs, ys, budget);
      if (!may) return true;
      if (!*may) continue;
      // Otherwise the products as the contraction built them, in the proof's form. Two
      // positions usually show that no term is common.
      bool counts = true;
      solver::CommonTerms common(ctx, true);
      for (int64_t k = 0; k < sa.length && counts; ++k) {
        const solver::Value p = ctx.mul(xs[size_t(k)], ys[size_t(k)]);
        const size_t terms = ctx.term_count(p);
        if (terms > budget) return true;  // past the budget: taken to count
        budget -= terms;
        const std::optional<solver::Value> q = form.of(ctx, p, limits::kProofFormBudget);
        if (!q) return true;
        counts = common.add(*q);
      }
      if (counts) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<CountedSum> confirm_sums(solver::Context& ctx, const std::vector<reduce::SumSite>& sites,
                  const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                  const std::vector<exec::Env>& envs, const ProofForm& form,
                  SumProducers* known) {
  // The node producing each output, per program (rewriting moves nodes, not their outputs).
  SumProducers own;
  SumProducers& producers = known ? *known : own;
  for (const reduce::SumSite& s : sites) {
    const ir::Graph& g = s.rank < 0 ? spec : plan.program_of(s.rank);
    const exec::Env& env = s.rank < 0 ? spec_env : envs[size_t(s.rank)];
    auto [at, fresh] = producers.try_emplace(&g);
    if (fresh)
      for (size_t i = 0; i < g.nodes.size(); ++i)
        for (const auto& o : g.nodes[i].outputs) at->second[o] = i;
    auto p = at->second.find(s.output + reduce::kMeanSumSuffix);  // a rewritten ReduceMean
    if (p == at->second.end()) p = at->second.find(s.output);
    if (p == at->second.end()) continue;
    const ir::Node& n = g.nodes[p->second];
    auto value = [&](size_t input) -> const ir::Tensor* {
      if (input >= n.inputs.size()) return nullptr;
      auto it = env.values.find(n.inputs[input]);
      return it == env.values.end() ? nullptr : &it->second;
    };
    const ir::Tensor* x = value(s.input);
    if (!x || s.axis >= x->shape.size() || x->shape[s.axis] == s.full)
      continue;  // not run, or not shrunk after all
    bool counts = false;
    if (s.other < 0) {
      counts = counts_along(ctx, *x, s.axis, addend_of(n), form);
    } else if (const ir::Tensor* y = value(size_t(s.other))) {
      size_t budget = limits::kProductBudget;  // per site
      counts = products_count(ctx, *x, s.axis, *y, s.other_axis, budget, form);
    }
    if (counts)
      return CountedSum{g.file + ": " + n.describe(p->second) + " (input #" +
                            std::to_string(s.input) + ", axis " + std::to_string(s.axis) + ")",
                        reduce::counted_sum_key(g.file, s.output, s.input, s.axis), ""};
  }
  return std::nullopt;
}

}  // namespace onnx_tv::check
