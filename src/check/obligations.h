#pragma once
// The output side of bindings: what must be proven, whether every spec output is covered, and
// the comparison itself.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/bindings.h"

namespace onnx_tv::prove {

// One thing to prove: a spec region equals a rank value (replica) or the sum of a partial set.
struct Obligation {
  std::string spec;
  frontend::Region region;
  std::vector<const frontend::Binding*> members;  // one for a replica
};

// Resolves output bindings against the computed spec shapes and groups partial sets. InputError
// when a spec output is not covered element for element, or a rank value has the wrong shape.
// Rank graph outputs that no binding names are returned in `unused`.
std::vector<Obligation> build_obligations(const ir::Graph& spec, const frontend::Plan& plan,
                                          const BoundPlan& bound, const Env& spec_env,
                                          const std::vector<Env>& envs,
                                          std::vector<std::string>& unused);

// The first element where an obligation fails.
struct Failure {
  size_t obligation = 0;
  int64_t offset = 0;           // row-major offset inside the region
  solver::Value spec_value;
  solver::Value plan_value;     // the replica's value, or the partial set's sum
};

// Decides two values whose canonical forms differ (they may still be equal where the sides
// built products differently: see definitions in solver/context.h).
using SameValue = std::function<bool(solver::Value spec, solver::Value plan)>;

// Compares every obligation; returns the first failing element of each failing obligation
// (empty when all hold) and counts the elements compared.
std::vector<Failure> failures(solver::Context& ctx, const std::vector<Obligation>& obs,
                              const Env& spec_env, const std::vector<Env>& envs,
                              const SameValue& same, int64_t& compared);

// The value of an obligation's plan side at one region offset.
solver::Value plan_value(solver::Context& ctx, const Obligation& ob,
                         const std::vector<Env>& envs, int64_t offset);

}  // namespace onnx_tv::prove
