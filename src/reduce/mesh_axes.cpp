#include "reduce/mesh_axes.h"

#include <algorithm>

#include "ir/comm_parse.h"
#include "reduce/micro_batches.h"

namespace onnx_tv::reduce {

namespace {

// A reason that holds for every axis at once, or "".
std::string whole_world_reason(const ir::Plan& plan) {
  for (const auto& g : plan.programs)
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const ir::Node& n = g->nodes[i];
      if (!ir::is_comm_op(n)) continue;
      if (n.domain == "com.microsoft")
        return g->file + ": " + n.describe(i) + " spans the whole world";
      if (n.attribute("group") || n.attribute("peer"))
        return g->file + ": " + n.describe(i) + " names its ranks explicitly";
    }
  return "";
}

// Collectives that read positions along `axis`: a Broadcast's root, a Send/Recv's peer.
std::string positional_reason(const ir::Plan& plan, const std::string& axis) {
  for (const auto& g : plan.programs)
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const ir::Node& n = g->nodes[i];
      if (!ir::is_comm_op(n)) continue;
      const ir::Attribute* axes = n.attribute("group_axes");
      const ir::Attribute* peer = n.attribute("peer_axis");
      const bool along =
          (n.op_type == "Broadcast" && axes &&
           std::find(axes->strings.begin(), axes->strings.end(), axis) != axes->strings.end()) ||
          (peer && peer->s == axis);
      if (along) return g->file + ": " + n.describe(i) + " reads positions along it";
    }
  return "";
}

std::string axis_reason(const ir::Plan& plan, size_t a,
                        const std::vector<std::vector<std::string>>& keys) {
  const ir::Mesh& mesh = *plan.mesh;
  bool shards = false;
  for (const auto& b : plan.bindings)
    shards = shards || (a < b.placements.size() &&
                        b.placements[a].kind == ir::Placement::Kind::Shard);
  if (!shards) return "no binding shards a dimension along it";
  for (int64_t r = 0; r < plan.world_size; ++r) {
    auto c = mesh.coords(r);
    if (c[a] == 0) continue;
    c[a] = 0;
    const int64_t r0 = mesh.rank_of(c);
    if (plan.rank_program[size_t(r)] != plan.rank_program[size_t(r0)])
      return "ranks " + std::to_string(r0) + " and " + std::to_string(r) + " run different programs";
    if (keys[size_t(r)] != keys[size_t(r0)])
      return "ranks " + std::to_string(r0) + " and " + std::to_string(r) + " have different bindings";
  }
  return positional_reason(plan, mesh.axes[a]);
}

}  // namespace

std::vector<std::map<std::string, int64_t>> count_grid(const FewerRanks& fewer) {
  std::vector<std::map<std::string, int64_t>> out(1);
  std::vector<std::string> keys = fewer.axes;
  if (fewer.micro_batches) keys.push_back(kMicroBatches);
  for (const auto& axis : keys) {
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto& point : out)
      for (int64_t n : {2, 3}) {
        next.push_back(point);
        next.back()[axis] = n;
      }
    out = std::move(next);
  }
  return out;
}

FewerRanks all_ranks(const ir::Plan& full) {
  FewerRanks out;
  out.plan = full;
  out.full_mesh = full.mesh;
  for (int64_t r = 0; r < full.world_size; ++r) out.original.push_back(r);
  return out;
}

FewerRanks choose_fewer_ranks(const ir::Plan& full,
                              const KeptWhole& kept) {
  if (!full.mesh) return all_ranks(full);
  const ir::Mesh& mesh = *full.mesh;
  std::string world = whole_world_reason(full);
  if (world.empty() && kept.every_rank) world = *kept.every_rank;
  std::vector<std::vector<std::string>> keys(size_t(full.world_size));
  for (const auto& b : full.bindings) keys[size_t(b.rank)].push_back(ir::binding_key(b));
  for (auto& k : keys) std::sort(k.begin(), k.end());

  FewerRanks chosen;
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    if (mesh.shape[a] <= 3) continue;
    std::string why = world;
    if (auto k = kept.mesh_axes.find(mesh.axes[a]); why.empty() && k != kept.mesh_axes.end())
      why = k->second;
    if (why.empty()) why = axis_reason(full, a, keys);
    if (!why.empty()) {
      chosen.kept.push_back("mesh axis '" + mesh.axes[a] + "' keeps its " +
                            std::to_string(mesh.shape[a]) + " ranks: " + why);
      continue;
    }
    chosen.axes.push_back(mesh.axes[a]);
    chosen.notes.push_back("mesh axis '" + mesh.axes[a] + "': " + std::to_string(mesh.shape[a]) +
                           " ranks -> 2 and 3");
  }
  return with_counts(full, chosen, {});
}

FewerRanks with_counts(const ir::Plan& full, const FewerRanks& chosen,
                       const std::map<std::string, int64_t>& counts) {
  const auto m = counts.find(kMicroBatches);
  const int64_t bodies = chosen.micro_batches ? (m == counts.end() ? 2 : m->second) : 0;
  if (chosen.axes.empty()) {
    FewerRanks all = all_ranks(full);
    all.kept = chosen.kept;
    all.micro_batches = chosen.micro_batches;
    all.micro_batch_count = bodies;
    return all;
  }
  const ir::Mesh& mesh = *full.mesh;
  FewerRanks out;
  out.full_mesh = full.mesh;
  out.axes = chosen.axes;
  out.notes = chosen.notes;
  out.kept = chosen.kept;
  out.micro_batches = chosen.micro_batches;
  out.micro_batch_count = bodies;
  ir::Mesh small = mesh;
  for (const auto& axis : out.axes) {
    const auto c = counts.find(axis);
    const int64_t n = c == counts.end() ? 2 : c->second;
    small.shape[size_t(mesh.axis_index(axis))] = n;
    out.counts.push_back(n);
  }
  // The ranks whose coordinate on every shrunk axis is below its count, renumbered on the
  // small mesh.
  int64_t ranks = 1;
  for (int64_t n : small.shape) ranks *= n;
  std::vector<int64_t> renamed(size_t(full.world_size), -1);
  out.original.assign(size_t(ranks), -1);
  for (int64_t r = 0; r < full.world_size; ++r) {
    const auto c = mesh.coords(r);
    bool kept = true;
    for (size_t a = 0; a < c.size(); ++a) kept = kept && c[a] < small.shape[a];
    if (!kept) continue;
    renamed[size_t(r)] = small.rank_of(c);
    out.original[size_t(renamed[size_t(r)])] = r;
  }
  out.plan.dir = full.dir;
  out.plan.world_size = ranks;
  out.plan.mesh = small;
  out.plan.programs = full.programs;
  for (int64_t r : out.original) out.plan.rank_program.push_back(full.rank_program[size_t(r)]);
  for (const auto& b : full.bindings) {
    if (renamed[size_t(b.rank)] < 0) continue;
    out.plan.bindings.push_back(b);
    out.plan.bindings.back().rank = renamed[size_t(b.rank)];
  }
  return out;
}

}  // namespace onnx_tv::reduce
