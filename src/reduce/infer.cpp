// The driver of dimension inference: graph inputs and constants get fresh dimensions, every
// node of the spec and every step of the linked plan applies its rule, and bindings tie rank
// values to the regions of spec values they hold.
#include <algorithm>
#include <set>

#include "common/errors.h"
#include "common/memory_limit.h"
#include "ir/binding_side.h"
#include "reduce/infer.h"
#include "reduce/micro_batches.h"
#include "reduce/reduce_detail.h"

namespace onnx_tv::reduce {

void add_vars(DimStore& dims, Axis& to, const Axis& from) {
  if (from.empty()) return;
  Axis all = dims.leaves(to);
  for (Var v : dims.leaves(from)) all.push_back(v);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  to = std::move(all);
}

namespace {

std::vector<int64_t> static_dims(const ProgramDims& p, const ir::ValueInfo& vi) {
  std::vector<int64_t> out;
  if (!vi.shape) throw NotApplicable(p.label + ": graph input '" + vi.name + "' has no declared shape");
  for (const auto& d : *vi.shape) {
    if (!d.size) {
      NotApplicable e(p.label + ": graph input '" + vi.name + "' has a symbolic dimension '" +
                      d.symbol + "'");
      // Reduction needs every input's size; checking at full size may then be out of reach.
      e.add_hint("export the program with static shapes (no dynamic axes), or give the size as "
                 "the dimension's dim_value, to have the plan proven on a reduced instance");
      throw e;
    }
    out.push_back(*d.size);
  }
  return out;
}

// `bound`: the program's values that bindings name (a bound initializer is an input).
void start_program(Inference& inf, ProgramDims& p, const std::set<std::string>& bound) {
  for (const auto& vi : p.graph->inputs) {
    if (p.graph->initializers.count(vi.name)) continue;
    DimValue v;
    v.dims = inf.dims.fresh_shape(static_dims(p, vi), p.label + " input '" + vi.name + "'");
    v.dtype = vi.dtype;
    v.symbolic = true;
    p.values[vi.name] = std::move(v);
  }
  for (const auto& [name, c] : p.graph->initializers) {
    try {
      p.values[name] = const_dims(inf, c, p.label + " initializer '" + name + "'");
    } catch (Error& e) {  // a NaN
      e.add_context(p.label + ": initializer '" + name + "'");
      throw;
    }
    if (bound.count(name)) p.values[name].symbolic = true;
  }
}


void store(ProgramDims& p, const ir::Node& node, std::vector<DimValue> outs) {
  for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k)
    if (!node.outputs[k].empty()) p.values[node.outputs[k]] = std::move(outs[k]);
}

void run_node(Inference& inf, ProgramDims& p, size_t i) {
  check_memory_at(inf.memory_bytes, [&] { return "shape reduction, " + where(p, i); });
  std::vector<DimValue> outs = infer_node(inf, p, i);
  follow_sizes_as_data(inf, p, i, outs);
  follow_uniform_parts(inf, p, i, outs);
  store(p, p.graph->nodes[i], std::move(outs));
}

const DimValue& value_of(ProgramDims& p, const std::string& name, const std::string& context) {
  auto it = p.values.find(name);
  if (it == p.values.end())
    throw NotApplicable(p.label + ": " + context + " reads '" + name + "', which is not defined");
  return it->second;
}

// The count of a collective's group as the product of its mesh axes' counts at full size,
// when the group is every rank kept along those axes in row-major order (the rank-generic
// group_axes form); `plan_mesh` is the mesh of the ranks kept.
std::optional<Axis> group_count(Inference& inf, const ir::Mesh* plan_mesh,
                                const std::vector<int64_t>& group) {
  const std::vector<size_t> axes = spanned_axes(inf, group);
  if (axes.empty() || !plan_mesh) return std::nullopt;
  int64_t n = 1;
  for (size_t a : axes) n *= plan_mesh->shape[a];
  if (n != int64_t(group.size())) return std::nullopt;
  const auto base = plan_mesh->coords(group[0]);
  for (size_t k = 0; k < group.size(); ++k) {
    auto c = base;
    int64_t rest = int64_t(k);
    for (size_t i = axes.size(); i-- > 0;) {
      c[axes[i]] = rest % plan_mesh->shape[axes[i]];
      rest /= plan_mesh->shape[axes[i]];
    }
    if (plan_mesh->rank_of(c) != group[k]) return std::nullopt;
  }
  Axis out;
  for (size_t a : axes) out.insert(out.end(), inf.mesh_counts[a].begin(), inf.mesh_counts[a].end());
  return out;
}

void fix_spanned(Inference& inf, const std::vector<int64_t>& group, const std::string& why) {
  for (size_t a : spanned_axes(inf, group)) inf.dims.fix(inf.mesh_counts[a], why);
}

void run_comm(Inference& inf, const ir::Plan& plan, const exec::Step& step) {
  using ir::CommKind;
  const auto& first = step.members[0];
  ProgramDims& p0 = inf.ranks[size_t(first.rank)];
  const std::string here = where(p0, first.node_index);
  if (step.kind == exec::Step::Kind::P2P) {
    const auto& send = step.members[0];
    const auto& recv = step.members[1];
    fix_spanned(inf, {send.rank, recv.rank}, here + " sends along it");
    DimValue v = value_of(inf.ranks[size_t(send.rank)], send.comm->data_input, here);
    v.concrete.reset();  // what is received is data, whatever it was computed from
    if (!recv.comm->output.empty()) inf.ranks[size_t(recv.rank)].values[recv.comm->output] = v;
    if (!send.comm->output.empty()) inf.ranks[size_t(send.rank)].values[send.comm->output] = {};
    return;
  }
  const int64_t g = int64_t(step.members.size());
  std::vector<DimValue> ins;
  for (const auto& m : step.members)
    ins.push_back(value_of(inf.ranks[size_t(m.rank)], m.comm->data_input, here));
  // Members whose inputs differ in size are left to the check at full size, where the
  // executor's check of the collective's shapes (exec/comm_shapes.h) accepts an uneven gather
  // and rejects the rest. That check is not made here: with fewer ranks the group has fewer
  // members than the full sizes were split over.
  std::vector<ir::Shape> full_shapes;
  for (const DimValue& v : ins) full_shapes.push_back(inf.dims.full_shape(v.dims));
  for (size_t k = 1; k < ins.size(); ++k) {
    if (ins[k].dims.size() != ins[0].dims.size())
      throw NotApplicable(here + ": the members' inputs have different ranks");
    for (size_t a = 0; a < ins[0].dims.size(); ++a) {
      // Sizes may differ only along a concatenated axis (an uneven gather): kept whole.
      if (full_shapes[k][a] != full_shapes[0][a])
        throw NotApplicable(here + ": the members' inputs differ in size along axis " +
                           std::to_string(a));
      inf.dims.unify(ins[0].dims[a], ins[k].dims[a], here + " (members' inputs)");
    }
  }
  const bool sums = first.comm->kind == CommKind::AllReduce || first.comm->kind == CommKind::ReduceScatter;
  DimValue out = ins[0];
  out.concrete.reset();
  out.size_derived = false;
  for (const DimValue& v : ins) {
    out.symbolic |= v.symbolic;
    // Over-approximated as the members' union (what may be uniform on one member is taken
    // to be so on all).
    out.uniform.insert(out.uniform.end(), v.uniform.begin(), v.uniform.end());
    out.parts.insert(out.parts.end(), v.parts.begin(), v.parts.end());
    add_vars(inf.dims, out.positions, v.positions);
    add_vars(inf.dims, out.offset_positions, sums ? v.positions : v.offset_positions);
    add_vars(inf.dims, out.counts, v.counts);
    out.mask = out.mask && v.mask;
  }
  // A sum over ranks of data that does not depend on the inputs counts the ranks (an
  // all-reduced 1 is the group's size): the count keeps its full size.
  if (sums && !out.symbolic) fix_spanned(inf, first.comm->group, here + " sums data that does not depend on the inputs over it");
  // A sum over ranks of routing data counts over them (tokens routed to an expert on every
  // rank of the group), as a sum along a dimension does: where the count is read as an
  // integer (a capacity, an index), the ranks are kept (sizes_as_data.cpp). An expert's load
  // only summed and passed out is a polynomial of degree 1 in the count, which 2 and 3 prove.
  const bool routing = out.symbolic && (out.mask || ir::is_integer(out.dtype) || out.dtype == ir::DType::Bool);
  if (sums && routing)
    for (size_t a : spanned_axes(inf, first.comm->group)) add_vars(inf.dims, out.counts, inf.mesh_counts[a]);
  const size_t r = out.dims.size();
  auto axis_of = [&](int64_t a) {
    const int64_t n = a < 0 ? a + int64_t(r) : a;
    if (n < 0 || n >= int64_t(r)) throw NotApplicable(here + ": axis out of range");
    return size_t(n);
  };
  // A gathered or scattered axis is (group, piece); the group's count is the mesh axes'
  // counts when the group is in mesh order, else fixed, with them.
  const std::optional<Axis> count =
      group_count(inf, plan.mesh ? &*plan.mesh : nullptr, first.comm->group);
  if (!count) fix_spanned(inf, first.comm->group, here + " has a group not in mesh order");
  auto gathered = [&](const Axis& a) {
    Axis out_axis = count ? *count : inf.dims.fresh(g, here + " gathers along it", true);
    out_axis.insert(out_axis.end(), a.begin(), a.end());
    return out_axis;
  };
  auto scattered = [&](const Axis& a) {
    const int64_t n = count ? inf.dims.full(*count) : g;  // the full plan's group size
    auto parts = inf.dims.split_inner(a, inf.dims.full(a) / n);
    if (inf.dims.full(a) % n != 0 || !parts)
      throw NotApplicable(here + ": the scattered axis does not split evenly");
    if (count)
      inf.dims.unify(parts->first, *count, here + " scatters along it");
    else
      inf.dims.fix(parts->first, here + " scatters along it");
    return parts->second;
  };
  switch (first.comm->kind) {
    case CommKind::AllReduce:
      break;
    case CommKind::Broadcast:  // reads the root's position along the group
      fix_spanned(inf, first.comm->group, here + " broadcasts along it");
      break;
    case CommKind::AllGather:
      out.dims[axis_of(first.comm->axis)] = gathered(out.dims[axis_of(first.comm->axis)]);
      break;
    case CommKind::ReduceScatter:
      out.dims[axis_of(first.comm->axis)] = scattered(out.dims[axis_of(first.comm->axis)]);
      break;
    case CommKind::AllToAll: {
      if (first.comm->flatten) throw NotApplicable(here + ": a flattened AllToAll");
      const size_t s = axis_of(first.comm->split_axis), c = axis_of(first.comm->concat_axis);
      out.dims[s] = scattered(out.dims[s]);
      out.dims[c] = gathered(out.dims[c]);
      break;
    }
    default:
      throw NotApplicable(here + ": an unexpected communication op");
  }
  for (const auto& m : step.members)
    if (!m.comm->output.empty()) inf.ranks[size_t(m.rank)].values[m.comm->output] = out;
}

}  // namespace

namespace {

// The count of the pieces the placements of `b` cut spec dimension d into, as mesh axes'
// counts (none when b gives an explicit slice, which placements would cut within).
std::optional<Axis> placement_count(Inference& inf, const ir::Binding* b, size_t d,
                                    size_t dims) {
  if (!b || !inf.full_mesh || b->placements.empty() || b->slice) return std::nullopt;
  Axis out;
  for (size_t a = 0; a < b->placements.size(); ++a) {
    const ir::Placement& p = b->placements[a];
    if (p.kind != ir::Placement::Kind::Shard) continue;
    const int64_t pd = p.dim < 0 ? p.dim + int64_t(dims) : p.dim;
    if (pd == int64_t(d)) out.insert(out.end(), inf.mesh_counts[a].begin(), inf.mesh_counts[a].end());
  }
  return out;
}

}  // namespace

void bind_region(Inference& inf, const DimShape& spec, const DimShape& rank,
                 const ir::Region& region, const std::string& why,
                 const ir::Binding* binding, std::optional<size_t> micro_batch_dim) {
  if (spec.size() != rank.size()) throw NotApplicable(why + ": ranks differ");
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t s = region.start[d];
    const int64_t n = region.end[d] - s;
    Axis outer = spec[d];
    // Placements first cut the axis into one piece per rank coordinate; a local slice then
    // cuts within that piece as any slice does.
    const auto count = placement_count(inf, binding, d, spec.size());
    if (count && !count->empty()) {
      const int64_t shard = inf.dims.full(spec[d]) / inf.dims.full(*count);
      auto parts = inf.dims.split_inner(spec[d], shard);
      if (parts && inf.dims.full(parts->first) == inf.dims.full(*count)) {
        inf.dims.unify(parts->first, *count, why + " cuts it into pieces");
        outer = parts->second;
        s %= shard;
      } else {  // the pieces do not follow the ranks: they keep their count
        inf.dims.fix(*count, why + " cuts it where its ranks' pieces do not fall");
      }
    }
    const int64_t N = inf.dims.full(outer);
    const bool micro = micro_batch_dim == d;
    if (n == N) {
      if (micro) inf.dims.fix(inf.micro_batches, why + " does not cut it into micro-batches");
      inf.dims.unify(outer, rank[d], why);
      continue;
    }
    std::optional<std::pair<Axis, Axis>> parts;
    if (n > 0 && N % n == 0 && s % n == 0) parts = inf.dims.split_inner(outer, n);
    if (!parts) {
      if (micro) inf.dims.fix(inf.micro_batches, why + " cuts it into uneven pieces");
      inf.dims.fix(outer, why + " cuts it into uneven pieces");
      inf.dims.fix(rank[d], why + " cuts it into uneven pieces");
      continue;
    }
    if (micro && inf.dims.full(parts->first) == inf.dims.full(inf.micro_batches)) {
      inf.dims.unify(parts->first, inf.micro_batches, why + " cuts it into micro-batches");
    } else {
      if (micro) inf.dims.fix(inf.micro_batches, why + " cuts its region into other pieces");
      inf.dims.fix(parts->first, why + " cuts it into pieces");
    }
    inf.dims.unify(parts->second, rank[d], why);
  }
}

void run_inference(Inference& inf, const ir::Graph& spec, const ir::Plan& plan,
                   const exec::LinkedPlan& linked, const FewerRanks& fewer,
                   std::vector<BoundRegion>& bound) {
  inf.full_mesh = fewer.full_mesh;
  inf.original = fewer.original;
  if (inf.full_mesh)
    for (size_t a = 0; a < inf.full_mesh->axes.size(); ++a) {
      const std::string& name = inf.full_mesh->axes[a];
      const int64_t n = inf.full_mesh->shape[a];
      const auto it = std::find(fewer.axes.begin(), fewer.axes.end(), name);
      const bool shrinks = it != fewer.axes.end();
      const std::string origin = "mesh axis '" + name + "' (" + std::to_string(n) + " ranks)";
      const int64_t target = shrinks ? fewer.counts[size_t(it - fewer.axes.begin())] : n;
      inf.mesh_counts.push_back(shrinks ? inf.dims.fresh_count(n, origin, target)
                                        : inf.dims.fresh(n, origin + ", all kept", true));
      inf.shrinks.push_back(shrinks);
      inf.targets.push_back(target);
    }
  if (fewer.micro_batch_count) {
    inf.micro_batches = inf.dims.fresh_count(
        fewer.micro_batches, "micro-batches (" + std::to_string(fewer.micro_batches) + " per program)",
        fewer.micro_batch_count);
    inf.micro_batch_target = fewer.micro_batch_count;
    inf.micro_batch_pieces = fewer.micro_batch_pieces;
  }
  inf.spec.graph = &spec;
  inf.spec.label = spec.file.empty() ? "spec.onnx" : spec.file;
  std::set<std::string> spec_bound;
  std::vector<std::set<std::string>> rank_bound(size_t(plan.world_size));
  for (const ir::Binding& b : plan.bindings) {
    if (b.rank < 0 || b.rank >= plan.world_size) continue;
    // A constant a rank passes out (an output binding) stays constant data.
    if (!ir::is_input_binding(b, plan.program_of(b.rank), spec)) continue;
    spec_bound.insert(b.spec);
    rank_bound[size_t(b.rank)].insert(b.value);
  }
  start_program(inf, inf.spec, spec_bound);
  for (size_t i = 0; i < spec.nodes.size(); ++i) run_node(inf, inf.spec, i);
  inf.ranks.resize(size_t(plan.world_size));
  for (int64_t r = 0; r < plan.world_size; ++r) {
    ProgramDims& p = inf.ranks[size_t(r)];
    p.graph = &plan.program_of(r);
    p.label = "rank " + std::to_string(r) + " (" + p.graph->file + ")";
    start_program(inf, p, rank_bound[size_t(r)]);
  }
  for (const exec::Step& step : linked.steps) {
    if (step.kind == exec::Step::Kind::Node) {
      ProgramDims& p = inf.ranks[size_t(step.members[0].rank)];
      const size_t i = step.members[0].node_index;
      run_node(inf, p, i);
    } else {
      run_comm(inf, plan, step);
    }
  }
  for (const ir::Binding& fb : plan.bindings) {
    const DimValue& sv = value_of(inf.spec, fb.spec, fb.origin);
    ir::Binding at_full = fb;  // the region it holds in the full plan
    at_full.rank = inf.original[size_t(fb.rank)];
    BoundRegion b{&fb, ir::resolve_region(at_full, inf.full_mesh, inf.dims.full_shape(sv.dims))};
    bound.push_back(b);
    const DimValue& s = value_of(inf.spec, b.binding->spec, b.binding->origin);
    const DimValue& v = value_of(inf.ranks[size_t(b.binding->rank)], b.binding->value,
                                 b.binding->origin);
    // What the check at full size says of a value that does not fit its region, said before
    // any dimension is tied to it.
    ir::Shape region(b.region.start.size());
    for (size_t d = 0; d < region.size(); ++d) region[d] = b.region.end[d] - b.region.start[d];
    const ir::Shape have = inf.dims.full_shape(v.dims);
    if (have != region)
      throw InputError(fb.origin + ": '" + fb.value + "' of rank " +
                       std::to_string(inf.original[size_t(fb.rank)]) + " (" +
                       plan.program_of(fb.rank).file + ") has shape " + ir::shape_string(have) +
                       " but its region of spec '" + fb.spec + "' has shape " +
                       ir::shape_string(region));
    const auto piece = inf.micro_batch_pieces.find({fb.rank, fb.value});
    bind_region(inf, s.dims, v.dims, b.region, b.binding->origin, b.binding,
                piece == inf.micro_batch_pieces.end() ? std::nullopt
                                                      : std::optional<size_t>(piece->second));
  }
  // Positions compared across two axes that nothing made one: their reduced values are not
  // ordered as the full ones, so they keep full size.
  for (const PositionCompare& c : inf.position_compares)
    for (size_t k = 1; k < c.operands.size(); ++k) {
      const Axis a = inf.dims.leaves(c.operands[0]), b = inf.dims.leaves(c.operands[k]);
      if (std::find_first_of(a.begin(), a.end(), b.begin(), b.end()) == a.end()) {
        inf.dims.fix(c.all, c.where);
        break;
      }
    }
}

std::vector<size_t> spanned_axes(const Inference& inf, const std::vector<int64_t>& group) {
  std::vector<size_t> out;
  if (!inf.full_mesh || group.empty()) return out;
  const auto first = inf.full_mesh->coords(inf.original[size_t(group[0])]);
  for (size_t a = 0; a < first.size(); ++a)
    for (int64_t r : group)
      if (inf.full_mesh->coords(inf.original[size_t(r)])[a] != first[a]) {
        out.push_back(a);
        break;
      }
  return out;
}

std::optional<KeepRanks> check_shrunk_counts(Inference& inf) {
  for (size_t a = 0; a < inf.shrinks.size(); ++a) {
    if (!inf.shrinks[a]) continue;
    const Axis leaves = inf.dims.leaves(inf.mesh_counts[a]);
    const std::string& name = inf.full_mesh->axes[a];
    if (leaves.size() != 1)
      return KeepRanks{name, "another dimension splits its count of ranks"};
    if (inf.dims.is_fixed(leaves[0])) return KeepRanks{name, inf.dims.why_fixed(leaves[0])};
    // Two axes' counts made one dimension keep one target: the other axis's ranks would not
    // match it.
    if (inf.dims.reduced_extent(leaves[0]) != inf.targets[a])
      return KeepRanks{name, "its count of ranks is one dimension with another axis's"};
  }
  if (inf.micro_batch_target) {
    const Axis leaves = inf.dims.leaves(inf.micro_batches);
    if (leaves.size() != 1)
      return KeepRanks{kMicroBatches, "another dimension splits the count of micro-batches", true};
    if (inf.dims.is_fixed(leaves[0]))
      return KeepRanks{kMicroBatches, inf.dims.why_fixed(leaves[0]), true};
    if (inf.dims.reduced_extent(leaves[0]) != inf.micro_batch_target)
      return KeepRanks{kMicroBatches, "the count of micro-batches is one dimension with a count of ranks",
                      true};
  }
  return std::nullopt;
}

}  // namespace onnx_tv::reduce
