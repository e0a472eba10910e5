#include "check/misused_collective.h"

#include <set>
#include <unordered_map>

#include "ops/registry.h"

namespace onnx_tv::check {

namespace {

// Spec values up to a rational factor: each is keyed by itself divided by its first
// coefficient, so c * v finds v.
class ScaledIndex {
 public:
  ScaledIndex(solver::Context& ctx, const std::unordered_set<solver::Value, solver::ValueHash>& vs)
      : ctx_(ctx) {
    for (const auto& v : vs)
      if (!ctx.is_constant(v)) keys_.insert(normal(v));
  }
  bool contains(solver::Value v) { return v.is_finite() && !ctx_.is_constant(v) && keys_.count(normal(v)); }

 private:
  solver::Value normal(solver::Value v) {
    const solver::Rational lead = ctx_.term(v.poly, 0).coefficient->to_rational();
    return ctx_.mul(v, ctx_.constant(solver::Rational(1) / lead));
  }
  solver::Context& ctx_;
  std::unordered_set<solver::Value, solver::ValueHash> keys_;
};

bool reduces(ir::CommKind k) {
  return k == ir::CommKind::AllReduce || k == ir::CommKind::ReduceScatter;
}

// The tensor `name` was taken from by ops that only move or select data (a Slice of a chunk, a
// Reshape), on `rank`; itself when it was computed.
std::string moved_from(const ir::Plan& plan, const exec::Env& env, int64_t rank,
                       const std::string& name) {
  auto it = env.producer.find(name);
  if (it == env.producer.end()) return name;
  const ir::Node& node = plan.program_of(rank).nodes[it->second];
  const ops::OpSchema* schema = ops::schema_of(node);
  if (!schema || schema->traits.movement == ops::Movement::None || node.inputs.empty()) return name;
  return node.inputs[0];
}

// Whether the members' `names` tensors add up, element for element, to spec values.
bool adds_up(solver::Context& ctx, const exec::Step& s, const std::vector<exec::Env>& envs,
             const std::vector<std::string>& names, ScaledIndex& index) {
  std::vector<const ir::Tensor*> ins;
  for (size_t k = 0; k < s.members.size(); ++k) {
    auto it = envs[s.members[k].rank].values.find(names[k]);
    if (it == envs[s.members[k].rank].values.end()) return false;
    if (!ins.empty() && it->second.shape != ins[0]->shape) return false;
    ins.push_back(&it->second);
  }
  if (ins.empty() || ins[0]->data.empty()) return false;
  std::vector<solver::Value> xs(ins.size());
  for (size_t e = 0; e < ins[0]->data.size(); ++e) {
    for (size_t k = 0; k < ins.size(); ++k) xs[k] = ins[k]->data[e];
    // In a staged run spec values are cut atoms: the sum takes the atom the spec cut.
    solver::Value sum = ctx.known_cut(ctx.sum(xs));
    if (!ctx.is_constant(sum) && !index.contains(sum)) return false;
  }
  return true;
}

}  // namespace

std::optional<MisusedCollective> find_misused_collective(
    solver::Context& ctx, const ir::Plan& plan, const exec::LinkedPlan& linked,
    const std::vector<exec::Env>& envs,
    const std::unordered_set<solver::Value, solver::ValueHash>& spec_values, const OnPath& on_path) {
  std::optional<ScaledIndex> index;
  for (const exec::Step& s : linked.steps) {
    if (s.kind != exec::Step::Kind::Collective || reduces(s.members[0].comm->kind)) continue;
    const exec::Step::Member* mine = nullptr;
    for (const auto& m : s.members)
      if (!m.comm->output.empty() && on_path(m.rank, m.comm->output)) {
        mine = &m;
        break;
      }
    if (!mine) continue;
    if (!index) index.emplace(ctx, spec_values);
    // The inputs themselves, then what they were sliced or reshaped from.
    std::vector<std::string> names;
    for (const auto& m : s.members) names.push_back(m.comm->data_input);
    bool all = false;
    for (int hop = 0; hop < 3 && !all; ++hop) {
      all = adds_up(ctx, s, envs, names, *index);
      for (size_t k = 0; k < names.size(); ++k)
        names[k] = moved_from(plan, envs[s.members[k].rank], s.members[k].rank, names[k]);
    }
    if (all) return MisusedCollective{mine->rank, mine->node_index, mine->comm->output};
  }
  return std::nullopt;
}

}  // namespace onnx_tv::check
