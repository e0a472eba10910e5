// A binding's region in spec coordinates. Placements follow PyTorch DTensor: Shard(d) on mesh
// axis a cuts the current extent of dimension d into shape[a] equal chunks and keeps chunk
// coords[a]; when several axes shard one dimension they apply in mesh-axis order, so the
// earlier axis is the coarser split, as DTensor lays out its default sharding.
#include "common/errors.h"
#include "ir/plan.h"

namespace onnx_tv::ir {

namespace {

std::string label(const Binding& b) {
  return b.origin + " (rank " + std::to_string(b.rank) + ", value '" + b.value + "', spec '" +
         b.spec + "')";
}

[[noreturn]] void fail(const Binding& b, const std::string& msg) {
  throw InputError(label(b) + ": " + msg);
}

// Narrows [start, end) by a slice given relative to `start` (local_slice) or absolutely.
void apply_slice(const Binding& b, const std::vector<SliceEntry>& slice, const char* what,
                 const std::vector<int64_t>& spec_shape, bool local, Region& r) {
  if (slice.size() != spec_shape.size()) {
    fail(b, std::string(what) + " has " + std::to_string(slice.size()) + " entries, but spec '" +
                b.spec + "' has " + std::to_string(spec_shape.size()) + " dimensions " +
                ir::shape_string(spec_shape) + " (expected one entry per dimension)");
  }
  for (size_t d = 0; d < slice.size(); ++d) {
    if (!slice[d]) continue;
    const auto [s, e] = *slice[d];
    const int64_t extent = r.end[d] - r.start[d];
    if (s < 0 || e < s || e > extent) {
      fail(b, std::string(what) + "[" + std::to_string(d) + "] = [" + std::to_string(s) + ", " +
                  std::to_string(e) + ") is out of range: " +
                  (local ? "the region's local extent" : "spec '" + b.spec + "' dimension " +
                                                             std::to_string(d) + " has size") +
                  " " + std::to_string(extent));
    }
    const int64_t base = local ? r.start[d] : 0;
    r.end[d] = base + e;
    r.start[d] = base + s;
  }
}

void apply_placements(const Binding& b, const std::optional<Mesh>& mesh,
                      const std::vector<int64_t>& spec_shape, Region& r) {
  if (!mesh) fail(b, "placements need a mesh in plan.json");
  if (b.placements.size() != mesh->axes.size()) {
    fail(b, std::to_string(b.placements.size()) + " placements given, but the mesh has " +
                std::to_string(mesh->axes.size()) + " axes (expected one per axis)");
  }
  const std::vector<int64_t> coords = mesh->coords(b.rank);
  const int64_t rank = int64_t(spec_shape.size());
  std::string partial_axes, other_coords;
  for (size_t a = 0; a < b.placements.size(); ++a) {
    const Placement& p = b.placements[a];
    const std::string& axis = mesh->axes[a];
    if (p.kind == Placement::Kind::Partial) {
      partial_axes += axis + ",";
      continue;
    }
    // The set of a Partial() placement is one per coordinate on the other axes (DTensor).
    other_coords += axis + "=" + std::to_string(coords[a]) + ",";
    if (p.kind != Placement::Kind::Shard) continue;
    const int64_t d = p.dim < 0 ? p.dim + rank : p.dim;
    if (d < 0 || d >= rank) {
      fail(b, "placement Shard(" + std::to_string(p.dim) + ") on mesh axis '" + axis +
                  "': spec '" + b.spec + "' has " + std::to_string(rank) + " dimensions " +
                  ir::shape_string(spec_shape));
    }
    const int64_t extent = r.end[size_t(d)] - r.start[size_t(d)];
    const int64_t n = mesh->shape[a];
    if (extent % n != 0) {
      fail(b, "placement Shard(" + std::to_string(p.dim) + ") on mesh axis '" + axis +
                  "' of size " + std::to_string(n) + ": dimension " + std::to_string(d) +
                  " of spec '" + b.spec + "' has extent " + std::to_string(extent) +
                  ", which does not split evenly");
    }
    const int64_t chunk = extent / n;
    r.start[size_t(d)] += coords[a] * chunk;
    r.end[size_t(d)] = r.start[size_t(d)] + chunk;
  }
  if (!partial_axes.empty()) {
    r.partial = true;
    r.set_key += "|partial over " + partial_axes + " at " + other_coords;
  }
}

}  // namespace

namespace {

std::string slice_text(const std::optional<std::vector<SliceEntry>>& s,
                       std::optional<size_t> open_dim) {
  if (!s) return "*";
  std::string out;
  bool whole = !open_dim;
  for (size_t d = 0; d < s->size(); ++d) {
    const SliceEntry& e = (*s)[d];
    whole = whole && !e;
    out += open_dim == d ? "?" : e ? "[" + std::to_string(e->first) + "," + std::to_string(e->second) + ")"
                                   : "_";
    out += ";";
  }
  return whole ? "*" : out;  // all-null is the whole tensor, as an omitted slice is
}

}  // namespace

std::string binding_key(const Binding& b, std::optional<size_t> open_dim) {
  std::string p;
  for (const Placement& pl : b.placements) p += placement_name(pl) + ",";
  return (open_dim ? "*" + std::to_string(*open_dim) : b.value) + "\n" + b.spec + "\n" +
         slice_text(b.slice, std::nullopt) + "\n" + p + "\n" + slice_text(b.local_slice, open_dim) +
         "\n" + (b.partial ? "p" : "") + "\n" + b.group;
}

std::string binding_region_key(const Binding& b) {
  const std::string key = binding_key(b);
  return key.substr(key.find('\n', key.find('\n') + 1));
}

Region resolve_region(const Binding& b, const std::optional<Mesh>& mesh,
                      const std::vector<int64_t>& spec_shape) {
  Region r;
  r.start.assign(spec_shape.size(), 0);
  r.end = spec_shape;
  // The set key starts with the group label; a plain partial set is (spec, slice, group).
  r.set_key = "group=" + b.group;
  if (b.slice) apply_slice(b, *b.slice, "slice", spec_shape, /*local=*/false, r);
  if (!b.placements.empty()) apply_placements(b, mesh, spec_shape, r);
  if (b.local_slice) apply_slice(b, *b.local_slice, "local_slice", spec_shape, /*local=*/true, r);
  if (b.partial) r.partial = true;
  return r;
}

std::string placement_name(const Placement& p) {
  switch (p.kind) {
    case Placement::Kind::Shard: return "Shard(" + std::to_string(p.dim) + ")";
    case Placement::Kind::Replicate: return "Replicate()";
    case Placement::Kind::Partial: return "Partial()";
  }
  return "?";
}

}  // namespace onnx_tv::ir
