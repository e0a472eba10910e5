// Cutting micro-batched programs down to a few bodies (micro_batches.h).
#include <algorithm>
#include <set>

#include "common/errors.h"
#include "reduce/micro_batches.h"

namespace onnx_tv::reduce {

namespace {

// The members of a comm step as (rank, node) of the full programs, sorted: the same step in
// both plans has the same key.
using StepKey = std::vector<std::pair<int64_t, size_t>>;

StepKey key_of(const exec::Step& step, const std::vector<std::vector<size_t>>* original,
               const ir::Plan& plan) {
  StepKey k;
  for (const auto& m : step.members) {
    size_t i = m.node_index;
    if (original) i = (*original)[plan.rank_program[size_t(m.rank)]][i];
    k.emplace_back(m.rank, i);
  }
  std::sort(k.begin(), k.end());
  return k;
}

}  // namespace

std::optional<MicroBatchCut> cut_micro_batches(const ir::Plan& plan,
                                               const exec::LinkedPlan& linked,
                                               const MicroBatches& mb, int64_t keep) {
  ONNX_TV_ASSERT(mb.count > keep && keep >= 1, "cutting micro-batches: " + std::to_string(keep) +
                                                   " of " + std::to_string(mb.count));
  MicroBatchCut out;
  out.plan = plan;
  out.totals.resize(plan.programs.size());
  std::vector<std::vector<size_t>> original(plan.programs.size());  // new node -> full node
  for (size_t p = 0; p < plan.programs.size(); ++p) {
    const ir::Graph& g = *plan.programs[p];
    std::vector<size_t>& orig = original[p];
    if (!mb.programs[p]) {
      for (size_t i = 0; i < g.nodes.size(); ++i) orig.push_back(i);
      continue;
    }
    const ProgramBodies& b = *mb.programs[p];
    std::vector<bool> dropped(g.nodes.size(), false);
    for (int64_t k = keep; k < mb.count; ++k)
      for (size_t i : b.bodies[size_t(k)]) dropped[i] = true;
    for (size_t i : b.partial_sums) dropped[i] = true;
    std::vector<const Total*> total_of(g.nodes.size(), nullptr);
    for (const auto& t : b.totals) total_of[t.node] = &t;
    auto gone = [&](const std::string& v) {
      auto it = b.piece_of.find(v);
      return it != b.piece_of.end() && it->second >= keep;
    };
    auto cut = std::make_shared<ir::Graph>(g);
    cut->nodes.clear();
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (dropped[i]) continue;
      orig.push_back(i);
      if (!total_of[i]) {
        cut->nodes.push_back(g.nodes[i]);
        continue;
      }
      ir::Node sum;  // the same total over the bodies kept
      sum.name = g.nodes[i].name;
      sum.op_type = "Sum";
      sum.opset = g.nodes[i].opset;
      sum.inputs.assign(total_of[i]->leaves.begin(), total_of[i]->leaves.begin() + keep);
      sum.inputs.insert(sum.inputs.end(), total_of[i]->shared.begin(), total_of[i]->shared.end());
      sum.outputs = {g.nodes[i].outputs[0]};
      const Total& t = *total_of[i];
      const auto from = g.value_info.find(t.declared_from);
      if (from != g.value_info.end() && !cut->value_info.count(sum.outputs[0])) {
        ir::ValueInfo vi = from->second;
        vi.name = sum.outputs[0];
        cut->value_info[vi.name] = std::move(vi);
      }
      out.totals[p].push_back(sum.outputs[0]);
      cut->nodes.push_back(std::move(sum));
    }
    std::erase_if(cut->inputs, [&](const ir::ValueInfo& vi) { return gone(vi.name); });
    std::erase_if(cut->outputs, [&](const ir::ValueInfo& vi) { return gone(vi.name); });
    std::erase_if(cut->initializers, [&](const auto& kv) { return gone(kv.first); });
    std::set<std::string> defined;  // declared shapes of values no longer computed go too
    for (const auto& n : cut->nodes) defined.insert(n.outputs.begin(), n.outputs.end());
    for (const auto& vi : cut->inputs) defined.insert(vi.name);
    for (const auto& [name, c] : cut->initializers) defined.insert(name);
    std::erase_if(cut->value_info, [&](const auto& kv) { return !defined.count(kv.first); });
    out.plan.programs[p] = std::move(cut);
  }
  out.plan.bindings.clear();
  for (const auto& bd : plan.bindings) {
    if (const auto& prog = mb.programs[plan.rank_program[size_t(bd.rank)]]) {
      auto it = prog->piece_of.find(bd.value);
      if (it != prog->piece_of.end() && it->second >= keep) continue;
    }
    out.plan.bindings.push_back(bd);
    auto d = mb.piece_dims.find({bd.rank, bd.value});
    if (d != mb.piece_dims.end()) out.piece_dims[d->first] = d->second;
  }
  // The bodies kept must talk to each other exactly as in the full plan: each collective and
  // Send/Recv of the cut plan is one of the full plan's, member for member.
  try {
    out.linked = exec::link_plan(out.plan);
  } catch (const InputError&) {  // an op left without its partner: the bodies talk across
    return std::nullopt;
  }
  std::set<StepKey> full;
  for (const auto& s : linked.steps)
    if (s.kind != exec::Step::Kind::Node) full.insert(key_of(s, nullptr, plan));
  for (const auto& s : out.linked.steps)
    if (s.kind != exec::Step::Kind::Node && !full.count(key_of(s, &original, out.plan)))
      return std::nullopt;
  return out;
}

}  // namespace onnx_tv::reduce
