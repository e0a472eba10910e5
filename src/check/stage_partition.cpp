#include "check/stage_partition.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "common/errors.h"

namespace onnx_tv::check {

fold::GraphParams spec_parameters(const ir::Graph& spec, const BoundPlan& bound) {
  std::unordered_map<std::string, bool> is_param;
  for (const auto& vi : spec.inputs) is_param[vi.name] = true;
  for (const auto& name : bound.symbolic_spec_values) is_param[name] = true;
  fold::GraphParams out;
  for (const auto& node : spec.nodes)
    for (const auto& in : node.inputs)
      if (is_param.count(in) && !out.of.count(in)) out.of.emplace(in, out.count++);
  return out;
}

StagePartition partition_stages(const ir::Graph& spec, const ir::Plan& plan,
                                const exec::LinkedPlan& linked, const BoundPlan& bound) {
  const fold::GraphParams spec_params = spec_parameters(spec, bound);
  const auto& index = spec_params.of;
  const int64_t params = spec_params.count;
  auto param_of = [&](const std::string& spec_name) {
    auto it = index.find(spec_name);
    return it == index.end() ? int64_t(-1) : it->second;
  };
  StagePartition out;
  out.stages = 2 * params + 2;

  out.spec_stage = fold::label_graph(spec, index, params);

  // A rank's parameters: its inputs bound to spec parameters.
  std::vector<std::unordered_map<std::string, int64_t>> rank_param(size_t(plan.world_size));
  for (const auto& rb : bound.bindings)
    if (rb.is_input) {
      const int64_t p = param_of(rb.binding->spec);
      if (p >= 0) {
        int64_t& slot = rank_param[size_t(rb.binding->rank)].try_emplace(rb.binding->value, p).first->second;
        slot = std::max(slot, p);
      }
    }
  std::vector<std::unordered_map<std::string, size_t>> producer(size_t(plan.world_size));
  std::vector<fold::LabelUnit> steps(linked.steps.size());
  auto read = [&](size_t s, int64_t rank, const std::string& name) {
    if (name.empty()) return;
    const auto& pm = producer[size_t(rank)];
    if (auto it = pm.find(name); it != pm.end()) {
      steps[s].producers.push_back(it->second);
    } else if (auto p = rank_param[size_t(rank)].find(name); p != rank_param[size_t(rank)].end()) {
      fold::add_param(steps[s], p->second);
    }
  };
  for (size_t s = 0; s < linked.steps.size(); ++s) {
    const exec::Step& step = linked.steps[s];
    for (const auto& m : step.members) {
      if (step.kind == exec::Step::Kind::Node) {
        for (const auto& in : plan.program_of(m.rank).nodes[m.node_index].inputs) read(s, m.rank, in);
      } else {
        read(s, m.rank, m.comm->data_input);
      }
    }
    for (const auto& m : step.members) {
      if (step.kind == exec::Step::Kind::Node) {
        for (const auto& o : plan.program_of(m.rank).nodes[m.node_index].outputs)
          if (!o.empty()) producer[size_t(m.rank)][o] = s;
      } else if (!m.comm->output.empty()) {
        producer[size_t(m.rank)][m.comm->output] = s;
      }
    }
  }
  out.step_stage = fold::label_units(steps, params);
  return out;
}

}  // namespace onnx_tv::check
