#include "exec/executor.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include "common/memory_limit.h"
#include "common/errors.h"
#include "ir/comm_parse.h"
#include "ops/registry.h"

namespace onnx_tv::exec {

namespace {

const ir::Tensor* lookup(const Env& env, const ir::Graph& g, const ir::Node& node, size_t index,
                         const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = env.values.find(name);
  if (it == env.values.end())
    throw InputError(g.file + ": " + node.describe(index) + " reads '" + name +
                     "', which no earlier node produces and which is not a graph input or "
                     "initializer");
  return &it->second;
}

void store(Env& env, const ir::Node& node, size_t index, std::vector<ir::Tensor> outs) {
  for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k) {
    if (node.outputs[k].empty()) continue;
    env.values[node.outputs[k]] = std::move(outs[k]);
    env.producer[node.outputs[k]] = index;
  }
}

void run_one(solver::Context& ctx, const ir::Graph& g, Env& env, size_t i,
             const RunLimits& limits, const TensorHook& hook) {
  const ir::Node& node = g.nodes[i];
  check_memory_at(limits.memory_bytes,
                  [&] { return "running the programs, " + g.file + ": " + node.describe(i); });
  std::vector<const ir::Tensor*> ins;
  for (const auto& name : node.inputs) ins.push_back(lookup(env, g, node, i, name));
  const auto start = std::chrono::steady_clock::now();
  std::vector<ir::Tensor> outs;
  try {
    outs = ops::run_node(ctx, node, i, ins, limits.node_elements);
  } catch (Error& e) {
    e.add_context(g.file);
    throw;
  }
  if (limits.trace) {
    size_t terms = 0;
    for (const auto& t : outs)
      for (const auto& v : t.data) terms = std::max(terms, ctx.term_count(v));
    limits.trace(g.file, node.describe(i),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            terms);
  }
  if (hook)
    for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k)
      if (!node.outputs[k].empty()) hook(node.outputs[k], outs[k]);
  store(env, node, i, std::move(outs));
}

// A collective or Send/Recv written outside the domains that hold them is an op the kernels do
// not know; exporters and hand-written plans often leave it in the default domain, so the
// message says where it belongs.
void hint_misplaced_collective(Error& e, const ir::Node& node) {
  static const char* const names[] = {"AllReduce", "AllGather", "ReduceScatter", "AllToAll",
                                      "Broadcast", "Send",      "Recv"};
  if (std::find(std::begin(names), std::end(names), node.op_type) == std::end(names)) return;
  if (ir::is_comm_op(node) || ops::schema_of(node)) return;  // not a failed op lookup
  e.add_hint("collectives and Send/Recv belong to domain \"onnx_tv\" (plan-format section 5), "
             "not '" + (node.domain.empty() ? std::string("ai.onnx") : node.domain) + "'");
}

}  // namespace

void run_graph(solver::Context& ctx, const ir::Graph& g, Env& env, const RunLimits& limits,
               const StepCallback& cb, const TensorHook& hook) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].domain == "onnx_tv")
      throw InputError(g.file + ": " + g.nodes[i].describe(i) +
                       " is a communication op, which the single-device spec cannot hold");
    run_one(ctx, g, env, i, limits, hook);
    if (cb) cb(int64_t(i + 1), int64_t(g.nodes.size()));
  }
}

void run_node_at(solver::Context& ctx, const ir::Graph& g, Env& env, size_t i,
                 const RunLimits& limits, const TensorHook& hook) {
  run_one(ctx, g, env, i, limits, hook);
}

void run_step(solver::Context& ctx, const ir::Plan& plan, const Step& step,
              std::vector<Env>& envs, const RunLimits& limits, const TensorHook& hook) {
  if (step.kind == Step::Kind::Node) {
    const auto& m = step.members[0];
    const ir::Graph& g = plan.program_of(m.rank);
    try {
      run_one(ctx, g, envs[m.rank], m.node_index, limits, hook);
    } catch (Unsupported& e) {
      hint_misplaced_collective(e, g.nodes[m.node_index]);
      throw;
    }
    return;
  }
  std::vector<const ir::Tensor*> ins;
  for (const auto& m : step.members) {
    const ir::Graph& g = plan.program_of(m.rank);
    const ir::Node& node = g.nodes[m.node_index];
    ins.push_back(m.comm->data_input.empty()
                      ? nullptr
                      : lookup(envs[m.rank], g, node, m.node_index, m.comm->data_input));
  }
  std::vector<ir::Tensor> outs;
  try {
    outs = run_comm(ctx, step, ins);
  } catch (Error& e) {
    const auto& m = step.members.back();
    const ir::Graph& g = plan.program_of(m.rank);
    e.add_context(g.file + ": " + g.nodes[m.node_index].describe(m.node_index));
    throw;
  }
  for (size_t k = 0; k < step.members.size(); ++k) {
    const auto& m = step.members[k];
    if (m.comm->output.empty()) continue;
    Env& env = envs[m.rank];
    if (hook) hook(m.comm->output, outs[k]);
    env.values[m.comm->output] = std::move(outs[k]);
    env.producer[m.comm->output] = m.node_index;
  }
}

void run_plan(solver::Context& ctx, const ir::Plan& plan, const LinkedPlan& linked,
              std::vector<Env>& envs, const RunLimits& limits, const StepCallback& cb,
              const TensorHook& hook) {
  int64_t done = 0;
  for (const Step& step : linked.steps) {
    run_step(ctx, plan, step, envs, limits, hook);
    if (cb) cb(++done, int64_t(linked.steps.size()));
  }
}

void check_declared_shapes(const ir::Graph& g, const Env& env) {
  ir::check_declared_shapes(g, [&](const std::string& name) -> std::optional<ir::Shape> {
    auto it = env.values.find(name);
    if (it == env.values.end()) return std::nullopt;
    return it->second.shape;
  });
}

}  // namespace onnx_tv::exec
