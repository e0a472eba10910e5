#include "check/misused_collective.h"

#include <unordered_map>

namespace onnx_tv::prove {

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

}  // namespace

std::optional<MisusedCollective> find_misused_collective(
    solver::Context& ctx, const LinkedPlan& linked, const std::vector<Env>& envs,
    const std::unordered_set<solver::Value, solver::ValueHash>& spec_values, const OnPath& on_path) {
  std::optional<ScaledIndex> index;
  for (const Step& s : linked.steps) {
    if (s.kind != Step::Kind::Collective || reduces(s.members[0].comm.kind)) continue;
    const Step::Member* mine = nullptr;
    for (const auto& m : s.members)
      if (!m.comm.output.empty() && on_path(m.rank, m.comm.output)) {
        mine = &m;
        break;
      }
    if (!mine) continue;
    std::vector<const ir::Tensor*> ins;
    for (const auto& m : s.members) {
      auto it = envs[m.rank].values.find(m.comm.data_input);
      if (it == envs[m.rank].values.end()) break;
      if (!ins.empty() && it->second.shape != ins[0]->shape) break;
      ins.push_back(&it->second);
    }
    if (ins.size() != s.members.size() || ins.empty() || ins[0]->data.empty()) continue;
    if (!index) index.emplace(ctx, spec_values);
    bool all = true;
    std::vector<solver::Value> xs(ins.size());
    for (size_t e = 0; all && e < ins[0]->data.size(); ++e) {
      for (size_t k = 0; k < ins.size(); ++k) xs[k] = ins[k]->data[e];
      solver::Value sum = ctx.sum(xs);
      all = ctx.is_constant(sum) || index->contains(sum);
    }
    if (all) return MisusedCollective{mine->rank, mine->node_index, mine->comm.output};
  }
  return std::nullopt;
}

}  // namespace onnx_tv::prove
