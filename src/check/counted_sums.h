#pragma once
// The runtime half of the argument that a sum along an axis the instance shrinks does not count
// its elements (reduce/uniform_parts.cpp is the static half). Terms can cancel where that
// analysis cannot see it: softmax(x - x) is 1/n, and x_k * (1/x_k) summed over k is n. So
// every such sum is confirmed on the instance's values: where the addends along the axis hold a
// term in common (same monomial, same coefficient), the instance counts its own size, not the
// full one, and its verdict, either way, does not stand for the full size.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/executor.h"
#include <optional>

#include "check/proof_form.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/sum_site.h"
#include "solver/context.h"

namespace onnx_tv::check {

// A sum site at which an instance counted: the instance proves nothing for the full size.
struct CountedSum {
  std::string where;    // "rank0.onnx: MatMul node '/x' (input #0, axis 2)"
  std::string key;      // reduce::counted_sum_key: the next instance keeps the axis whole
  std::string refuted;  // what the instance refuted, if it did: a hint should the full size fail
};

// The first site whose addends share a term, if any. For a contraction, the addends are the
// products of its factors along the axis; products of more terms than a budget allows are
// taken to count (the axis is then kept whole, which is always sound). Addends are judged in
// `form`, the representation the run's comparisons proved equal in.
// The node producing each output, per program: confirm_sums finds it, and keeps it in
// `producers` when given, for a caller that confirms sites a few at a time.
using SumProducers = std::map<const ir::Graph*, std::unordered_map<std::string, size_t>>;
std::optional<CountedSum> confirm_sums(solver::Context& ctx, const std::vector<reduce::SumSite>& sites,
                  const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                  const std::vector<exec::Env>& envs, const ProofForm& form,
                  SumProducers* producers = nullptr);

}  // namespace onnx_tv::check
