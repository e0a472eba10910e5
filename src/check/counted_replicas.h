#pragma once
// The guard of proofs with fewer ranks (reduce/mesh_axes.h). A sum over the ranks of an axis
// counts its addends: where every member adds the same term (a bias added on each
// tensor-parallel rank, a replicated value all-reduced), the full plan adds it n times and the
// instance only as many times as it kept ranks, so a plan that scales it by a constant made for
// another n (bias / 2 on each of 8 ranks) would agree with the spec in the instance and not at
// full size. Such a sum makes the check redo the reduction keeping every rank of the axes (and
// for a sum over micro-batches, every micro-batch).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/linker.h"
#include "check/obligations.h"
#include "check/proof_form.h"
#include "ir/plan.h"
#include "solver/context.h"

namespace onnx_tv::check {

// A sum over ranks (or micro-batches) an instance with fewer of them found counting them.
struct CountedReplicas {
  std::string where;
  bool micro_batches = false;  // a sum over micro-batches (counted_micro_batch_sum)
};

// Where a sum (AllReduce or ReduceScatter with reduce "sum", or an AllGather or AllToAll whose
// pieces are summed later) over a group that spans one of
// `axes` (mesh axes of plan.mesh) has a term common to every member's input: "rank3.onnx:
// AllReduce node '/x' (element 5)". nullopt when none has.
std::optional<std::string> counted_replica_sum(solver::Context& ctx, const ir::Plan& plan,
                                               const exec::LinkedPlan& linked,
                                               const std::vector<exec::Env>& envs,
                                               const std::vector<std::string>& axes,
                                               const ProofForm& form);

// The same for an output bound as a partial set whose members span one of `axes`: the spec
// value is the members' sum, so a term every member holds counts them.
std::optional<std::string> counted_partial_sum(solver::Context& ctx, const ir::Plan& plan,
                                               const std::vector<Obligation>& obs,
                                               const std::vector<exec::Env>& envs,
                                               const std::vector<std::string>& axes,
                                               const ProofForm& form);

// The same for the sums of one value per micro-batch that a plan with fewer micro-batches
// holds (reduce/micro_batches.h): `totals[p]` names the outputs of program p's sums, whose
// first `bodies` inputs are the bodies' values (a shared value the chain starts from follows).
// `nodes`, when given, are the (rank, node index) pairs to judge, in that order (a stage's
// own); else every node of every rank is.
std::optional<std::string> counted_micro_batch_sum(
    solver::Context& ctx, const ir::Plan& plan, const std::vector<exec::Env>& envs,
    const std::vector<std::vector<std::string>>& totals, size_t bodies, const ProofForm& form,
    const std::vector<std::pair<int64_t, size_t>>* nodes = nullptr);

}  // namespace onnx_tv::check
