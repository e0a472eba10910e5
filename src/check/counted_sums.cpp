#include "check/counted_sums.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/errors.h"
#include "common/limits.h"
#include "solver/common_monomial.h"

namespace onnx_tv::check {

namespace {

// Terms of products a contraction's confirmation may build, over all its sites, before it
// takes the rest to count (which only keeps axes whole).
constexpr size_t kProductBudget = limits::kProductBudget;

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
// tried, more than the contraction multiplies, which can only find more.
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
  for (size_t i = 0; i < sa.starts.size(); ++i) {
    const size_t batch = batched ? i / per_a : 0;
    const size_t from = batched ? batch * per_b : 0, to = batched ? from + per_b : sb.starts.size();
    for (size_t j = from; j < to; ++j) {
      // The products as the contraction built them (the same definitions), built as needed.
      std::vector<solver::Value> built;
      auto product = [&](int64_t k) -> std::optional<solver::Value> {
        while (int64_t(built.size()) <= k) {
          const int64_t at = int64_t(built.size());
          const solver::Value p = ctx.mul(a.data[size_t(sa.starts[i] + at * sa.stride)],
                                          b.data[size_t(sb.starts[j] + at * sb.stride)]);
          const size_t terms = ctx.term_count(p);
          if (terms > budget) return std::nullopt;
          budget -= terms;
          built.push_back(p);
        }
        return built[size_t(k)];
      };
      // Where their bounds leave no monomial in common in the proof's form, nothing more is
      // built (without unfolded definitions the bounds decide nothing: products are compared).
      if (form.bounds_apply()) {
        if (!product(sa.length - 1)) return true;
        if (!form.may_share(ctx, built)) continue;
      }
      // Two positions usually show that no term is common; the rest only when they share one.
      bool counts = true;
      solver::CommonTerms common(ctx, true);
      for (int64_t k = 0; k < sa.length && counts; ++k) {
        const std::optional<solver::Value> p = product(k);
        if (!p) return true;  // past the budget: taken to count
        const std::optional<solver::Value> q = form.of(ctx, *p, limits::kProofFormBudget);
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
                  const ir::Graph& spec, const exec::Env& spec_env, const frontend::Plan& plan,
                  const std::vector<exec::Env>& envs, const ProofForm& form) {
  // The node producing each output, per program (rewriting moves nodes, not their outputs).
  std::map<const ir::Graph*, std::unordered_map<std::string, size_t>> producers;
  size_t budget = kProductBudget;
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
