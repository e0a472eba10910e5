#pragma once
// Where a failing plan first departs from its spec, on each side.
//
// A rank tensor is explained when every element is a value the spec computes somewhere
// (matched; where the rank op has a namesake in the spec, as exporters name them, a value of
// that namesake's result), when something computed from it is matched (it recovers: a partial product that
// an all-reduce completes, a re-association), when it is a constant (a wrong constant shows
// in the op that uses it), or when it is an addend on its way into a summing collective or a
// partial binding, through ops linear in it. An unexplained tensor whose sum over a group of
// ranks that reduce together is made of spec values is a reduction that is missing; the report
// then names the last op of the linear chain that still holds such a complete set of addends,
// where the reduction belongs. When every tensor on the path is explained (a
// partial set whose addends are all wrong in the same linear way), the operator that produced
// the failing output is named. The first diverging
// operator on the plan side is the earliest operator, in dataflow order, on a path to the
// failing output whose result is not explained. The spec side is symmetric: the earliest spec
// operator on the failing output's path whose values no rank computes and that does not
// recover. A failing value that is its spec value times one rational k != 1 is a scale error
// (a divisor of the wrong count): the plan side is then the earliest operator on its path
// whose result is spec values times that same k, where the factor came in.
// This only names places for the report; the verdict never depends on it.
#include <optional>

#include "exec/executor.h"
#include "exec/linker.h"
#include "check/obligations.h"
#include "check/result.h"

namespace onnx_tv::check {

struct Location {
  std::optional<NodeRef> spec_node;
  std::optional<NodeRef> rank_node;
};

Location locate(solver::Context& ctx, const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                const exec::LinkedPlan& linked, const std::vector<exec::Env>& envs,
                const std::vector<Obligation>& obligations, size_t failing);

}  // namespace onnx_tv::check
