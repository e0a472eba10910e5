#pragma once
// Runs the spec and the linked plan over symbolic values: every node through the op registry,
// every collective and Send/Recv through its definition in plan-format section 5.
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/linker.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "solver/context.h"

namespace onnx_tv::exec {

// The values of one program (the spec, or one rank) and which node produced each.
struct Env {
  std::unordered_map<std::string, ir::Tensor> values;
  std::unordered_map<std::string, size_t> producer;  // tensor -> node index
};

// Called after every node with its file, description, seconds and largest output polynomial.
using TraceFn = std::function<void(const std::string& file, const std::string& node,
                                   double seconds, size_t max_terms)>;

// What bounds one run, carried by the caller rather than held globally, so independent checks
// may run at once.
struct RunLimits {
  // Resident memory, in bytes, past which running a program stops with UNKNOWN (0: no limit;
  // common/memory_limit.h).
  size_t memory_bytes = 0;
  // Elements one node may produce (0: no limit): its validated output shapes are checked
  // before its kernel allocates anything, so a Range of 5e8 elements ends UNKNOWN at once.
  int64_t node_elements = 0;
  TraceFn trace;  // may be empty
};

using StepCallback = std::function<void(int64_t done, int64_t total)>;

// Called on every tensor a node or a collective produces (with its name), before it is
// stored: stage cuts (check/stage_cuts.h) replace its elements there by equal forms.
using TensorHook = std::function<void(const std::string& name, ir::Tensor&)>;

// Runs every node of `g` in file order; `env` holds its inputs and initializers already.
void run_graph(solver::Context& ctx, const ir::Graph& g, Env& env, const RunLimits& limits,
               const StepCallback& cb = {}, const TensorHook& hook = {});

// Runs the linked plan; envs[r] holds rank r's inputs and initializers already.
void run_plan(solver::Context& ctx, const ir::Plan& plan, const LinkedPlan& linked,
              std::vector<Env>& envs, const RunLimits& limits, const StepCallback& cb = {},
              const TensorHook& hook = {});

// One node of `g` (its inputs in `env`), or one step of a linked plan: the units run_graph and
// run_plan are made of, for callers that run a program in another order its dataflow allows
// (check/stage_run.h runs it stage by stage).
void run_node_at(solver::Context& ctx, const ir::Graph& g, Env& env, size_t i,
                 const RunLimits& limits, const TensorHook& hook = {});
void run_step(solver::Context& ctx, const ir::Plan& plan, const Step& step,
              std::vector<Env>& envs, const RunLimits& limits, const TensorHook& hook = {});

// Declared static sizes of graph outputs and value_info that contradict the computed shapes
// are input errors (plan-format section 1).
void check_declared_shapes(const ir::Graph& g, const Env& env);

// A collective or P2P step given its members' input tensors (in member order); returns the
// output of each member (empty tensor where the member produces nothing).
std::vector<ir::Tensor> run_comm(solver::Context& ctx, const Step& step,
                                 const std::vector<const ir::Tensor*>& inputs);

}  // namespace onnx_tv::exec
