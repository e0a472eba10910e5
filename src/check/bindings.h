#pragma once
// Bindings put to work: on inputs they define rank values from spec symbols (replicas and
// slices are the spec's own symbols; a partial set gets fresh symbols for all addends but one,
// and the last is the region minus the others, which solves the sum relation exactly); on
// outputs they are the obligations to prove.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "solver/context.h"

namespace onnx_tv::check {

// A binding with its region resolved and its side known.
struct ResolvedBinding {
  const ir::Binding* binding;
  ir::Region region;
  bool is_input;  // the rank value is a graph input or initializer
};

struct BoundPlan {
  std::vector<ResolvedBinding> bindings;
  std::set<std::string> symbolic_spec_values;  // spec initializers that bindings make symbolic
};

// Classifies and resolves every binding. InputError for a binding that names no such value,
// an input bound to a spec value that is not an input or initializer, shapes that differ.
BoundPlan resolve_bindings(const ir::Graph& spec, const ir::Plan& plan,
                           size_t memory_bytes = 0);

// The spec's starting environment: symbols for graph inputs and bound initializers, exact
// constants for the other initializers.
exec::Env spec_inputs(solver::Context& ctx, const ir::Graph& spec, const BoundPlan& bound);

// Each rank's starting environment, from the spec's input values.
std::vector<exec::Env> rank_inputs(solver::Context& ctx, const ir::Plan& plan,
                             const BoundPlan& bound, const exec::Env& spec_env);

// The shape of a region: end - start per dimension.
ir::Shape region_shape(const ir::Region& r);

// The declared shape of a graph input, output or initializer when fully static.
std::optional<ir::Shape> static_shape(const ir::Graph& g, const std::string& name);

}  // namespace onnx_tv::check
