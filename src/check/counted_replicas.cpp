#include "check/counted_replicas.h"

#include <algorithm>
#include <set>

#include "common/errors.h"
#include "common/limits.h"
#include "solver/common_monomial.h"

namespace onnx_tv::check {

namespace {

std::vector<size_t> axis_indices(const ir::Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<size_t> idx;
  for (const auto& a : axes)
    if (int64_t i = mesh.axis_index(a); i >= 0) idx.push_back(size_t(i));
  return idx;
}

bool spans(const ir::Mesh& mesh, const std::vector<int64_t>& group,
           const std::vector<size_t>& axes) {
  const auto first = mesh.coords(group[0]);
  for (int64_t r : group) {
    const auto c = mesh.coords(r);
    for (size_t a : axes)
      if (c[a] != first[a]) return true;
  }
  return false;
}

// Definitions (large products kept as atoms, stage cuts) can hide a term every addend holds
// inside atoms of their own: (s+1)^2 - s^2 - 2s is 1. Where every addend expands within this
// many terms, the expanded forms are compared too (which finds more counts, never fewer
// proofs); what decides is the form the comparisons proved equal in (check/proof_form.h).
constexpr size_t kGuardExpansion = limits::kGuardExpansion;

// The first element at which every addend holds a multiple of one monomial, in the forms as
// built, expanded within kGuardExpansion, or in the form the comparisons proved equal in (where
// that is out of reach, the element counts). `expansion_left` is what the calling guard may
// still build by expanding (kGuardExpansionTotal per call: a stage's sums over ranks, its sums
// over micro-batches, or one obligation's partial set; a failed expansion counts the whole
// kGuardExpansion). The expansions stay in the context's tables until it ends; once the
// budget is spent, the forms as built and as proven decide alone, as they do for an addend
// past kGuardExpansion.
std::optional<size_t> common_term(solver::Context& ctx, const std::vector<const ir::Tensor*>& ins,
                                  const ProofForm& form, size_t& expansion_left) {
  for (size_t e = 0; e < ins[0]->data.size(); ++e) {
    std::vector<solver::Value> vs;
    for (const auto* t : ins) vs.push_back(t->data[e]);
    if (solver::share_a_monomial(ctx, vs)) return e;
    // Expanded one addend at a time, stopping where no monomial is common to those so far (or
    // one does not expand within the budget): no later addend can make one common again, so
    // the rest need not be expanded.
    solver::CommonTerms common(ctx, false);
    bool all = true, changed = false;
    for (solver::Value v : vs) {
      std::optional<solver::Value> x;
      if (!v.is_finite()) {
        x = v;
      } else if (expansion_left >= kGuardExpansion) {
        x = ctx.expand_definitions(v, kGuardExpansion);
        expansion_left -= x ? std::max<size_t>(1, ctx.term_count(*x)) : kGuardExpansion;
      }
      if (!x || !common.add(*x)) {
        all = false;
        break;
      }
      changed |= *x != v;
    }
    if (all && changed) return e;
    if (form.is_built_form() || !form.may_share(ctx, vs)) continue;
    std::vector<solver::Value> proven;
    for (solver::Value v : vs) {
      const std::optional<solver::Value> x = form.of(ctx, v, limits::kProofFormBudget);
      if (!x) return e;
      proven.push_back(*x);
    }
    if (proven != vs && solver::share_a_monomial(ctx, proven)) return e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> counted_replica_sum(solver::Context& ctx, const ir::Plan& plan,
                                               const exec::LinkedPlan& linked,
                                               const std::vector<exec::Env>& envs,
                                               const std::vector<std::string>& axes,
                                               const ProofForm& form) {
  if (!plan.mesh || axes.empty()) return std::nullopt;
  const std::vector<size_t> idx = axis_indices(*plan.mesh, axes);
  size_t expansion_left = limits::kGuardExpansionTotal;
  for (const exec::Step& step : linked.steps) {
    if (step.kind != exec::Step::Kind::Collective) continue;
    const ir::CommOp& op = *step.members[0].comm;
    // A gather or an exchange does not add, but what it brings together is added up later
    // (AllGather then ReduceSum over the gathered axis is a sum over ranks written by hand), so a
    // term every member sends counts the ranks as much as an AllReduce of it would.
    const bool gathers = op.kind == ir::CommKind::AllGather || op.kind == ir::CommKind::AllToAll;
    const bool sums = gathers || ((op.kind == ir::CommKind::AllReduce ||
                                   op.kind == ir::CommKind::ReduceScatter) &&
                                  op.reduce == ir::ReduceOp::Sum);
    if (!sums || !spans(*plan.mesh, op.group, idx)) continue;
    std::vector<const ir::Tensor*> ins;
    for (const auto& m : step.members) {
      auto it = envs[size_t(m.rank)].values.find(m.comm->data_input);
      if (it == envs[size_t(m.rank)].values.end()) return std::nullopt;  // not run: nothing proven
      ins.push_back(&it->second);
    }
    if (auto e = common_term(ctx, ins, form, expansion_left)) {
      const auto& m = step.members[0];
      const ir::Graph& g = plan.program_of(m.rank);
      return g.file + ": " + g.nodes[m.node_index].describe(m.node_index) + " (element " +
             std::to_string(*e) + ")";
    }
  }
  return std::nullopt;
}

std::optional<std::string> counted_partial_sum(solver::Context& ctx, const ir::Plan& plan,
                                               const std::vector<Obligation>& obs,
                                               const std::vector<exec::Env>& envs,
                                               const std::vector<std::string>& axes,
                                               const ProofForm& form) {
  if (!plan.mesh || axes.empty()) return std::nullopt;
  const std::vector<size_t> idx = axis_indices(*plan.mesh, axes);
  size_t expansion_left = limits::kGuardExpansionTotal;
  for (const Obligation& ob : obs) {
    if (ob.members.size() < 2) continue;
    std::vector<int64_t> ranks;
    std::vector<const ir::Tensor*> ins;
    for (const ir::Binding* b : ob.members) {
      auto it = envs[size_t(b->rank)].values.find(b->value);
      // A member bound by a local slice holds its addend inside a larger tensor: such sets are
      // not looked at (the guard only spares false alarms; the degree bound keeps soundness).
      if (b->local_slice || it == envs[size_t(b->rank)].values.end()) break;
      if (!ins.empty() && it->second.data.size() != ins[0]->data.size()) break;
      ranks.push_back(b->rank);
      ins.push_back(&it->second);
    }
    if (ins.size() != ob.members.size() || !spans(*plan.mesh, ranks, idx)) continue;
    if (auto e = common_term(ctx, ins, form, expansion_left))
      return ob.members[0]->origin + " (the partial set of '" + ob.spec + "', element " +
             std::to_string(*e) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> counted_micro_batch_sum(
    solver::Context& ctx, const ir::Plan& plan, const std::vector<exec::Env>& envs,
    const std::vector<std::vector<std::string>>& totals, size_t bodies, const ProofForm& form,
    const std::vector<std::pair<int64_t, size_t>>* nodes) {
  size_t expansion_left = limits::kGuardExpansionTotal;
  // Where rank r's node i is a sum of one value per micro-batch whose bodies share a term.
  auto counted = [&](int64_t r, size_t i) -> std::optional<std::string> {
    const size_t p = plan.rank_program[size_t(r)];
    if (p >= totals.size() || totals[p].empty()) return std::nullopt;
    const ir::Graph& g = plan.program_of(r);
    const ir::Node& n = g.nodes[i];
    if (n.outputs.empty() ||
        std::find(totals[p].begin(), totals[p].end(), n.outputs[0]) == totals[p].end())
      return std::nullopt;
    std::vector<const ir::Tensor*> ins;
    for (size_t k = 0; k < bodies && k < n.inputs.size(); ++k) {
      auto it = envs[size_t(r)].values.find(n.inputs[k]);
      if (it == envs[size_t(r)].values.end())  // every node runs: a bug in onnx-tv
        ONNX_TV_ASSERT(false, g.file + ": " + n.describe(i) + " was not run");
      ins.push_back(&it->second);
    }
    if (auto e = common_term(ctx, ins, form, expansion_left))
      return g.file + ": " + n.describe(i) + " (element " + std::to_string(*e) + ")";
    return std::nullopt;
  };
  if (nodes) {
    for (const auto& [r, i] : *nodes)
      if (auto where = counted(r, i)) return where;
    return std::nullopt;
  }
  for (int64_t r = 0; r < plan.world_size; ++r)
    for (size_t i = 0; i < plan.program_of(r).nodes.size(); ++i)
      if (auto where = counted(r, i)) return where;
  return std::nullopt;
}

}  // namespace onnx_tv::check
