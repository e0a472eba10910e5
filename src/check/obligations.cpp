#include "check/obligations.h"

#include <map>
#include <set>

#include "common/errors.h"
#include "ir/tensor_util.h"

namespace onnx_tv::check {

namespace {

// Marks the region in a coverage mask of the spec value's shape.
void cover(std::vector<char>& mask, const ir::Shape& shape, const ir::Region& r) {
  const auto st = ir::strides(shape);
  const ir::Shape rs = region_shape(r);
  const int64_t n = ir::element_count(rs);
  for (int64_t i = 0; i < n; ++i) {
    auto idx = ir::unravel(i, rs);
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + r.start[d]) * st[d];
    mask[off] = 1;
  }
}

}  // namespace

std::vector<Obligation> build_obligations(const ir::Graph& spec, const ir::Plan& plan,
                                          const BoundPlan& bound, const exec::Env& spec_env,
                                          const std::vector<exec::Env>& envs,
                                          std::vector<std::string>& unused) {
  std::vector<Obligation> obs;
  std::map<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::string>,
           size_t>
      partial_index;
  std::vector<std::set<std::string>> named(plan.world_size);
  for (const auto& rb : bound.bindings) named[rb.binding->rank].insert(rb.binding->value);
  for (const auto& rb : bound.bindings) {
    if (rb.is_input) continue;
    const auto& b = *rb.binding;
    const ir::Tensor& whole = spec_env.values.at(b.spec);
    ir::Region region;
    // resolve_region's errors name the binding's origin already.
    region = ir::resolve_region(b, plan.mesh, whole.shape);
    const ir::Tensor& mine = envs[b.rank].values.at(b.value);
    if (mine.shape != region_shape(region))
      throw InputError(b.origin + ": output '" + b.value + "' of rank " + std::to_string(b.rank) +
                       " (" + plan.program_of(b.rank).file + ") has shape " +
                       ir::shape_string(mine.shape) + " but its region of spec '" + b.spec +
                       "' has shape " + ir::shape_string(region_shape(region)));
    if (!region.partial) {
      obs.push_back({b.spec, region, {&b}});
      continue;
    }
    auto key = std::make_tuple(b.spec, region.start, region.end, region.set_key);
    auto [it, fresh] = partial_index.try_emplace(key, obs.size());
    if (fresh) obs.push_back({b.spec, region, {}});
    obs[it->second].members.push_back(&b);
  }
  // Every spec output element must be covered by a replica or a partial set.
  for (const auto& vi : spec.outputs) {
    const ir::Tensor& t = spec_env.values.at(vi.name);
    std::vector<char> mask(t.size(), 0);
    for (const auto& ob : obs)
      if (ob.spec == vi.name) cover(mask, t.shape, ob.region);
    int64_t missing = 0, first = -1;
    for (int64_t i = 0; i < t.size(); ++i)
      if (!mask[i]) {
        ++missing;
        if (first < 0) first = i;
      }
    if (missing)
      throw InputError("spec output '" + vi.name + "' is not covered by the plan's output "
                       "bindings: " + std::to_string(missing) + " of " + std::to_string(t.size()) +
                       " elements are bound by no rank output, the first at " +
                       ir::index_string(ir::unravel(first, t.shape)));
  }
  for (int64_t r = 0; r < plan.world_size; ++r)
    for (const auto& vi : plan.program_of(r).outputs)
      if (!named[r].count(vi.name))
        unused.push_back("rank " + std::to_string(r) + " output '" + vi.name + "' (" +
                         plan.program_of(r).file + ") is bound to no spec value: unused");
  return obs;
}

int64_t spec_offset(const ir::Shape& spec_shape, const ir::Region& r, int64_t offset) {
  auto idx = ir::unravel(offset, region_shape(r));
  const auto st = ir::strides(spec_shape);
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + r.start[d]) * st[d];
  return off;
}

solver::Value plan_value(solver::Context& ctx, const Obligation& ob,
                         const std::vector<exec::Env>& envs, int64_t offset) {
  std::vector<solver::Value> parts;
  for (const auto* b : ob.members) parts.push_back(envs[b->rank].values.at(b->value).data[offset]);
  return parts.size() == 1 ? parts[0] : ctx.sum(parts);
}

std::vector<Failure> failures(solver::Context& ctx, const std::vector<Obligation>& obs,
                              const exec::Env& spec_env, const std::vector<exec::Env>& envs,
                              const CompareValues& compare, int64_t& compared, bool& by_cases) {
  std::vector<Failure> out;
  for (size_t k = 0; k < obs.size(); ++k) {
    const auto& ob = obs[k];
    const ir::Tensor& whole = spec_env.values.at(ob.spec);
    const int64_t n = ir::element_count(region_shape(ob.region));
    std::optional<Failure> found;  // the first refuted element, else the first undecided
    for (int64_t i = 0; i < n; ++i) {
      ++compared;
      solver::Value want = whole.data[spec_offset(whole.shape, ob.region, i)];
      solver::Value got = plan_value(ctx, ob, envs, i);
      if (want == got) continue;
      // Before compare: a pair it leaves undecided ends the expansions of later ones.
      std::string why;
      if (ctx.equal_by_cases(want, got, &why)) {
        by_cases = true;
        continue;
      }
      const Comparison c = compare(want, got, ob.spec + " at offset " + std::to_string(i));
      if (c == Comparison::Refuted) {
        found = Failure{k, i, want, got, true, ""};
        break;
      }
      if (c == Comparison::Undecided && !found) found = Failure{k, i, want, got, false, why};
    }
    if (found) out.push_back(*found);
  }
  return out;
}

}  // namespace onnx_tv::check
