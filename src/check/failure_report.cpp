#include "check/failure_report.h"

#include <algorithm>
#include <unordered_map>

#include "check/locate.h"
#include "ir/tensor_util.h"

namespace onnx_tv::check {

namespace {

std::vector<int64_t> add(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

// Builds the NOT EQUIVALENT (or UNKNOWN) result for a failing obligation.
void explain_failure(CheckResult& res, solver::Context& ctx, WitnessSearch& search,
                     const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                     const exec::LinkedPlan& linked, const std::vector<exec::Env>& envs,
                     const std::vector<Obligation>& obs, const Failure& f) {
  const Obligation& ob = obs[f.obligation];
  Mismatch m;
  m.spec_output = ob.spec;
  m.region_start = ob.region.start;
  m.region_end = ob.region.end;
  m.element = add(ob.region.start, ir::unravel(f.offset, region_shape(ob.region)));
  m.binding = ob.members[0]->origin;
  m.partial = ob.region.partial;
  const auto& origin = res.reduction.rank_origin;  // ranks named as in the full plan
  auto original = [&](int64_t r) { return origin.empty() ? r : origin[size_t(r)]; };
  for (const auto* b : ob.members) {
    m.ranks.push_back(original(b->rank));
    m.rank_value += (m.rank_value.empty() ? "" : " + ") + b->value + "@rank" +
                    std::to_string(original(b->rank));
  }
  m.spec_expr = ctx.to_string(f.spec_value);
  m.plan_expr = ctx.to_string(f.plan_value);
  auto w = search.find(f.spec_value, f.plan_value, 64, true);
  if (!w) {
    res.verdict = Verdict::Unknown;
    res.message = "spec output '" + ob.spec + "' element " + ir::index_string(m.element) +
                  ": the plan's value and the spec's have different canonical forms but agree "
                  "at every point tried, so onnx-tv can neither prove nor refute them (spec: " +
                  m.spec_expr + "; plan: " + m.plan_expr + ")" +
                  (f.why_undecided.empty() ? "" : "; " + f.why_undecided);
    if (ctx.has_position(f.spec_value) || ctx.has_position(f.plan_value))
      res.message += "; they differ as functions of a position (pos[...]) along a dimension the "
                     "reduced instance shrinks, which its few positions do not tell apart "
                     "(docs/shape-reduction.md, \"Positions\"); --no-reduce checks at full size";
    res.mismatch = std::move(m);
    return;
  }
  m.witness = w->values;
  m.spec_number = w->a_number;
  m.plan_number = w->b_number;
  Location loc = locate(ctx, spec, spec_env, plan, linked, envs, obs, f.obligation);
  m.spec_node = loc.spec_node;
  m.rank_node = loc.rank_node;
  if (m.rank_node && m.rank_node->rank >= 0) m.rank_node->rank = original(m.rank_node->rank);
  res.verdict = Verdict::NotEquivalent;
  res.mismatch = std::move(m);
}

}  // namespace

void report_failures(CheckResult& res, solver::Context& ctx, WitnessSearch& search,
                     const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                     const exec::LinkedPlan& linked, const std::vector<exec::Env>& envs,
                     const std::vector<Obligation>& obs,
                     std::vector<Failure>& failed) {
  // Explain the earliest refuted spec output (in the spec's output order), else the earliest
  // undecided one: outputs come loss first in training graphs, and the first is what a user
  // looks at. Bindings on spec inputs or initializers come after every output.
  std::unordered_map<std::string, size_t> output_index;
  for (size_t i = 0; i < spec.outputs.size(); ++i) output_index.emplace(spec.outputs[i].name, i);
  auto position = [&](const Failure& f) {
    auto it = output_index.find(obs[f.obligation].spec);
    return it == output_index.end() ? spec.outputs.size() : it->second;
  };
  // An undecided output ahead of every refuted one gets the explanation's longer witness
  // search first, so that the report names it when it is wrong too.
  size_t first_refuted = spec.outputs.size() + 1;
  for (const auto& f : failed)
    if (f.refuted) first_refuted = std::min(first_refuted, position(f));
  for (auto& f : failed)
    if (!f.refuted && position(f) < first_refuted)
      f.refuted = search.refutes(f.spec_value, f.plan_value, 64);
  std::stable_sort(failed.begin(), failed.end(), [&](const auto& x, const auto& y) {
    return std::pair{!x.refuted, position(x)} < std::pair{!y.refuted, position(y)};
  });
  for (const auto& f : failed)
    if (f.refuted && std::find(res.failing_outputs.begin(), res.failing_outputs.end(),
                               obs[f.obligation].spec) == res.failing_outputs.end())
      res.failing_outputs.push_back(obs[f.obligation].spec);
  // Every undecided failure has had the full search: the first is refuted, or none is.
  explain_failure(res, ctx, search, spec, spec_env, plan, linked, envs, obs, failed[0]);
}

std::string refutation_summary(const CheckResult& res) {
  if (!res.mismatch) return "";
  const Mismatch& m = *res.mismatch;
  std::string s = "spec output '" + m.spec_output + "'";
  if (m.rank_node)
    s += ", first diverging at " + m.rank_node->file + " node '" + m.rank_node->node + "'";
  return s;
}

}  // namespace onnx_tv::check
