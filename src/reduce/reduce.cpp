#include "reduce/reduce.h"

#include <algorithm>
#include <map>
#include <set>
#include <variant>

#include "common/errors.h"
#include "ir/binding_side.h"
#include "reduce/reduce_detail.h"
#include "solver/context.h"

namespace onnx_tv::reduce {

namespace {

std::vector<ir::SliceEntry> reduced_slice(Inference& inf, const DimShape& spec,
                                                const std::vector<int64_t>& start,
                                                const std::vector<int64_t>& end,
                                                const std::string& what) {
  std::vector<ir::SliceEntry> out;
  for (size_t d = 0; d < spec.size(); ++d) {
    auto s = inf.dims.reduced_position(spec[d], start[d], true);
    auto e = inf.dims.reduced_position(spec[d], end[d], true);
    if (!s || !e) throw NotApplicable(what + ": its region is not made of whole blocks");
    out.push_back(std::make_pair(*s, *e));
  }
  return out;
}

int64_t elements(Inference& inf, const ProgramDims& p, bool reduced) {
  int64_t n = 0;
  for (const auto& [name, v] : p.values) {
    int64_t e = 1;
    for (const Axis& a : v.dims) e *= reduced ? inf.dims.reduced(a) : inf.dims.full(a);
    n += e;
  }
  return n;
}

// Every axis of the spec values `names`, with its factors; with `scalars`, a row with axis -1
// for a value of rank 0.
std::vector<ReducedDim> describe_values(Inference& inf, const std::vector<std::string>& names,
                                        bool scalars) {
  std::vector<ReducedDim> rows;
  for (const auto& name : names) {
    auto it = inf.spec.values.find(name);
    if (it == inf.spec.values.end()) continue;
    if (scalars && it->second.dims.empty()) rows.push_back(ReducedDim{name, -1, 1, 1, {}});
    for (size_t a = 0; a < it->second.dims.size(); ++a) {
      const Axis& ax = it->second.dims[a];
      ReducedDim row{name, int64_t(a), inf.dims.full(ax), inf.dims.reduced(ax), {}};
      for (Var v : inf.dims.leaves(ax)) {
        const bool fixed = inf.dims.is_fixed(v);
        const int64_t f = inf.dims.full_of(v);
        row.factors.push_back({f, inf.dims.reduced_extent(v), fixed ? inf.dims.why_fixed(v) : ""});
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<std::string> names_of(const std::vector<ir::ValueInfo>& infos) {
  std::vector<std::string> out;
  for (const auto& vi : infos) out.push_back(vi.name);
  return out;
}

// `spec_bound`: the spec values input bindings name.
void describe(Inference& inf, Reduced& out, const std::set<std::string>& spec_bound) {
  out.dims = describe_values(inf, names_of(out.spec.inputs), false);
  // So that a refuted element, and every witness input, can be named at full size as well.
  std::vector<std::string> others = names_of(out.spec.outputs);
  for (const auto& name : spec_bound)
    if (out.spec.initializers.count(name)) others.push_back(name);
  out.other_dims = describe_values(inf, others, true);
  for (const ReducedDim& d : describe_values(inf, names_of(out.spec.inputs), true))
    if (d.axis < 0) out.other_dims.push_back(d);
  // Factors kept at full size where it costs something: larger than 2, on tensors that are data
  // (the axes of small integer tensors, shapes and bounds, are fixed by nature).
  std::set<Var> seen_vars;
  std::set<std::string> seen;
  auto scan = [&](const ProgramDims& p) {
    for (const auto& [name, v] : p.values) {
      if (v.concrete) continue;
      for (const Axis& a : v.dims)
        for (Var x : inf.dims.leaves(a)) {
          if (!inf.dims.is_fixed(x) || inf.dims.full_of(x) <= 2 || !seen_vars.insert(x).second) continue;
          const std::string why = inf.dims.why_fixed(x) + " (size " + std::to_string(inf.dims.full_of(x)) + ")";
          if (seen.insert(why).second) out.kept_full.push_back(why);
        }
    }
  };
  scan(inf.spec);
  for (const auto& p : inf.ranks) scan(p);
}

// Declared static shapes are checked at full size, as the check would without reduction
// (plan-format section 1): the reduced programs declare reduced shapes of their own.
void check_declared(Inference& inf, ProgramDims& p) {
  ir::check_declared_shapes(*p.graph, [&](const std::string& name) -> std::optional<ir::Shape> {
    auto it = p.values.find(name);
    if (it == p.values.end()) return std::nullopt;
    return inf.dims.full_shape(it->second.dims);
  });
}

std::variant<Reduced, KeepRanks> build(const ir::Graph& spec, const ir::Plan& plan,
                                       const exec::LinkedPlan& linked, const FewerRanks& fewer,
                                       const std::map<std::string, std::string>* counted_sums,
                                       size_t memory_bytes) {
  Inference inf;
  inf.counted_sums = counted_sums;
  inf.memory_bytes = memory_bytes;
  std::vector<BoundRegion> bound;
  run_inference(inf, spec, plan, linked, fewer, bound);
  check_declared(inf, inf.spec);
  for (auto& p : inf.ranks) check_declared(inf, p);
  std::vector<ConstSite> sites = classify_constants(inf, spec, plan, bound);
  if (auto k = check_shrunk_counts(inf)) return *k;
  if (auto k = check_count_degrees(inf, spec, plan, linked, bound, fewer.micro_batch_totals))
    return *k;

  Reduced out;
  out.sum_sites = inf.sum_sites;
  std::set<std::string> spec_bound;
  std::vector<std::set<std::string>> rank_bound(size_t(plan.world_size));
  for (const auto& b : bound) {
    if (!ir::is_input_binding(*b.binding, plan.program_of(b.binding->rank), spec)) continue;
    spec_bound.insert(b.binding->spec);
    rank_bound[size_t(b.binding->rank)].insert(b.binding->value);
  }
  out.spec = rewrite_program(inf, inf.spec, sites, -1, spec_bound);

  out.plan.dir = plan.dir;
  out.plan.world_size = plan.world_size;
  out.plan.mesh = plan.mesh;
  out.plan.rank_program = plan.rank_program;
  std::vector<int64_t> first_rank(plan.programs.size(), -1);
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const size_t prog = plan.rank_program[size_t(r)];
    if (first_rank[prog] < 0) {
      first_rank[prog] = r;
      continue;
    }
    // Ranks sharing one file must share one reduced program.
    const ProgramDims& a = inf.ranks[size_t(first_rank[prog])];
    const ProgramDims& b = inf.ranks[size_t(r)];
    for (const auto& [name, v] : b.values) {
      auto it = a.values.find(name);
      if (it == a.values.end()) continue;
      if (inf.dims.reduced_shape(v.dims) != inf.dims.reduced_shape(it->second.dims))
        throw NotApplicable("ranks " + std::to_string(first_rank[prog]) + " and " + std::to_string(r) +
                           " run one program (" + plan.programs[prog]->file + ") but its value '" +
                           name + "' would reduce differently on them");
    }
  }
  for (size_t prog = 0; prog < plan.programs.size(); ++prog) {
    const int64_t r = first_rank[prog];
    if (r < 0) {
      out.plan.programs.push_back(plan.programs[prog]);
      continue;
    }
    out.plan.programs.push_back(std::make_shared<ir::Graph>(
        rewrite_program(inf, inf.ranks[size_t(r)], sites, r, rank_bound[size_t(r)])));
  }
  for (const auto& b : bound) {
    ir::Binding nb = *b.binding;
    nb.slice = reduced_slice(inf, inf.spec.values.at(nb.spec).dims, b.region.start, b.region.end,
                             nb.origin);
    nb.placements.clear();
    nb.local_slice.reset();
    nb.partial = b.region.partial;
    nb.group = b.region.set_key;  // keeps the partial sets as they were
    out.plan.bindings.push_back(std::move(nb));
  }
  // Rank tables are bound to the spec tables they equal, on every rank that runs the program.
  std::set<std::pair<int64_t, std::string>> table_bound;  // (rank, value) already bound
  for (const auto& b : out.plan.bindings) table_bound.emplace(b.rank, b.value);
  for (const auto& s : sites) {
    if (s.action != ConstSite::Action::RankTable) continue;
    for (int64_t r = 0; r < out.plan.world_size; ++r) {
      if (out.plan.rank_program[size_t(r)] != plan.rank_program[size_t(s.rank)]) continue;
      ir::Binding nb;
      nb.rank = r;
      nb.value = table_input(plan.program_of(r), s.name);
      nb.spec = table_input(spec, s.table);
      nb.origin = "constant '" + s.name + "' of " + plan.program_of(r).file +
                  " (equal to a region of the spec's constant '" + s.table + "')";
      nb.slice = reduced_slice(inf, inf.spec.values.at(s.table).dims, s.region.start,
                               s.region.end, nb.origin);
      nb.group = "onnx_tv.table";
      if (table_bound.emplace(r, nb.value).second) out.plan.bindings.push_back(std::move(nb));
    }
  }
  out.full_elements = elements(inf, inf.spec, false);
  out.reduced_elements = elements(inf, inf.spec, true);
  for (const auto& p : inf.ranks) {
    out.full_elements += elements(inf, p, false);
    out.reduced_elements += elements(inf, p, true);
  }
  describe(inf, out, spec_bound);
  return out;
}

}  // namespace

Outcome reduce_plan(const ir::Graph& spec, const FewerRanks& fewer,
                    const exec::LinkedPlan& linked, const KeptWhole& kept, size_t memory_bytes) {
  Outcome o;
  try {
    auto built = build(spec, fewer.plan, linked, fewer, &kept.counted_sums, memory_bytes);
    if (auto* k = std::get_if<KeepRanks>(&built)) o.keep_ranks = std::move(*k);
    else o.reduced = std::move(std::get<Reduced>(built));
  } catch (const NotApplicable& e) {
    o.why = e.message();
  } catch (const MathError& e) {
    // A value undefined over the reals (0 * inf, log of -1) is the user's error when every
    // rank and micro-batch is kept, as inference then computes the full-size program's own
    // values; with fewer, a size it reads may differ, and the full-size check decides.
    if (!fewer.axes.empty() || fewer.micro_batch_count) o.why = e.message();
    else throw;
  } catch (const ResourceLimit&) {
    throw;  // checking at full size instead would need more
  } catch (const Unsupported& e) {
    o.why = e.message();  // an op reduction does not model; the full-size check may
  }
  // Any other InputError (a declared shape contradicted, a malformed node) is the error the
  // check at full size would give; an InternalError is a bug, never a reason to skip reduction.
  return o;
}

}  // namespace onnx_tv::reduce
