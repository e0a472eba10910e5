#pragma once
// Where a failing plan first departs from its spec, on each side.
//
// A rank tensor is explained when every element is a value the spec computes somewhere
// (matched), when something computed from it is matched (it recovers: a partial product that
// an all-reduce completes, a re-association), or when it is an addend on its way into a
// reducing collective or a partial binding (through linear ops only). The first diverging
// operator on the plan side is the earliest operator, in dataflow order, on a path to the
// failing output whose result is not explained. The spec side is symmetric: the earliest spec
// operator on the failing output's path whose values no rank computes and that does not
// recover. This only names places for the report; the verdict never depends on it.
#include <optional>

#include "check/executor.h"
#include "check/linker.h"
#include "check/obligations.h"
#include "check/result.h"

namespace onnx_tv::prove {

struct Location {
  std::optional<NodeRef> spec_node;
  std::optional<NodeRef> rank_node;
};

Location locate(const ir::Graph& spec, const Env& spec_env, const frontend::Plan& plan,
                const LinkedPlan& linked, const std::vector<Env>& envs,
                const std::vector<Obligation>& obligations, size_t failing);

}  // namespace onnx_tv::prove
