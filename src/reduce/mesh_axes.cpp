#include "reduce/mesh_axes.h"

#include <algorithm>
#include <map>

#include "frontend/plan.h"

namespace onnx_tv::reduce {

namespace {

std::string slice_text(const std::optional<std::vector<frontend::SliceEntry>>& s) {
  if (!s) return "-";
  std::string out;
  for (const auto& e : *s)
    out += e ? std::to_string(e->first) + ":" + std::to_string(e->second) + "," : ":,";
  return out;
}

// What a binding says, whichever rank it is on: equal keys along an axis mean the ranks
// bind the same values the same way (placements pick each one's piece).
std::string binding_key(const frontend::Binding& b) {
  std::string p;
  for (const auto& pl : b.placements)
    p += std::to_string(int(pl.kind)) + "/" + std::to_string(pl.dim) + ",";
  return b.value + "\n" + b.spec + "\n" + slice_text(b.slice) + "\n" + p + "\n" +
         slice_text(b.local_slice) + "\n" + (b.partial ? "p" : "") + "\n" + b.group;
}

// A reason that holds for every axis at once, or "".
std::string whole_world_reason(const frontend::Plan& plan) {
  for (const auto& g : plan.programs)
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const ir::Node& n = g->nodes[i];
      if (!frontend::is_comm_op(n)) continue;
      if (n.domain == "com.microsoft")
        return g->file + ": " + n.describe(i) + " spans the whole world";
      if (n.attribute("group") || n.attribute("peer"))
        return g->file + ": " + n.describe(i) + " names its ranks explicitly";
    }
  return "";
}

}  // namespace

void fix_mesh_axes(Inference& inf, const frontend::Plan& plan, const std::string& keep_ranks) {
  if (!inf.mesh) return;
  const frontend::Mesh& mesh = *inf.mesh;
  const std::string world = keep_ranks.empty() ? whole_world_reason(plan) : keep_ranks;
  std::vector<std::vector<std::string>> keys(size_t(plan.world_size));
  for (const auto& b : plan.bindings) keys[size_t(b.rank)].push_back(binding_key(b));
  for (auto& k : keys) std::sort(k.begin(), k.end());

  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    const Axis& count = inf.mesh_counts[a];
    if (count.empty()) continue;
    auto fix = [&](const std::string& why) {
      inf.dims.fix(count, "mesh axis '" + mesh.axes[a] + "' keeps its ranks: " + why);
    };
    if (!world.empty()) {
      fix(world);
      continue;
    }
    bool shards = false;
    for (const auto& b : plan.bindings)
      shards = shards || (a < b.placements.size() &&
                          b.placements[a].kind == frontend::Placement::Kind::Shard);
    if (!shards) {
      fix("no binding shards a dimension along it");
      continue;
    }
    for (int64_t r = 0; r < plan.world_size; ++r) {
      auto c = mesh.coords(r);
      if (c[a] == 0) continue;
      c[a] = 0;
      const int64_t r0 = mesh.rank_of(c);
      if (plan.rank_program[size_t(r)] != plan.rank_program[size_t(r0)]) {
        fix("ranks " + std::to_string(r0) + " and " + std::to_string(r) + " run different programs");
        break;
      }
      if (keys[size_t(r)] != keys[size_t(r0)]) {
        fix("ranks " + std::to_string(r0) + " and " + std::to_string(r) + " have different bindings");
        break;
      }
    }
  }
  // Checked last: the rules above and inference may have split a count (a Reshape of the
  // batch into pieces of another size), and only a whole count maps to rank coordinates.
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    const Axis& count = inf.mesh_counts[a];
    if (!count.empty() && inf.dims.leaves(count).size() != 1)
      inf.dims.fix(count, "mesh axis '" + mesh.axes[a] + "' keeps its ranks: its count is split");
  }
}

KeptRanks kept_ranks(Inference& inf, const frontend::Plan& plan) {
  KeptRanks out;
  out.mesh = plan.mesh;
  out.renamed.assign(size_t(plan.world_size), -1);
  if (!plan.mesh) {
    for (int64_t r = 0; r < plan.world_size; ++r) {
      out.original.push_back(r);
      out.renamed[size_t(r)] = r;
    }
    return out;
  }
  for (size_t a = 0; a < plan.mesh->axes.size(); ++a) {
    const int64_t n = inf.dims.reduced(inf.mesh_counts[a]);
    if (n == plan.mesh->shape[a]) continue;
    out.notes.push_back("mesh axis '" + plan.mesh->axes[a] + "': " +
                        std::to_string(plan.mesh->shape[a]) + " ranks -> " + std::to_string(n));
    out.mesh->shape[a] = n;
    out.axes.push_back(plan.mesh->axes[a]);
  }
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const auto c = plan.mesh->coords(r);
    bool kept = true;
    for (size_t a = 0; a < c.size(); ++a) kept = kept && c[a] < out.mesh->shape[a];
    if (!kept) continue;
    const int64_t nr = out.mesh->rank_of(c);
    if (size_t(nr) >= out.original.size()) out.original.resize(size_t(nr) + 1, -1);
    out.original[size_t(nr)] = r;
    out.renamed[size_t(r)] = nr;
  }
  return out;
}

}  // namespace onnx_tv::reduce
