#pragma once
// A reduction replaced by a collective that does not reduce (an all-gather, all-to-all or
// broadcast of partial sums) is a common plan bug whose values a value matcher cannot place:
// the partial sums upstream are as they should be, and what comes out is only wrong because it
// was never added up. This finds such a collective directly: its members' inputs, or what they
// were sliced or reshaped from, add up to spec values (up to one rational factor, as
// data-parallel gradients of local means do), and it lies on the failing output's path.
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "exec/executor.h"
#include "exec/linker.h"
#include "solver/context.h"

namespace onnx_tv::check {

struct MisusedCollective {
  int64_t rank;
  size_t node_index;
  std::string output;
};

using OnPath = std::function<bool(int64_t rank, const std::string& tensor)>;

std::optional<MisusedCollective> find_misused_collective(
    solver::Context& ctx, const ir::Plan& plan, const exec::LinkedPlan& linked,
    const std::vector<exec::Env>& envs,
    const std::unordered_set<solver::Value, solver::ValueHash>& spec_values, const OnPath& on_path);

}  // namespace onnx_tv::check
