#include "check/folded_run.h"

#include "check/stage_partition.h"
#include "common/errors.h"
#include "exec/linker.h"
#include "fold/depth_fold.h"
#include "fold/param_labels.h"

namespace onnx_tv::check {

bool prove_folded(CheckResult& res, const CheckOptions& options, const ir::Graph& spec,
                  const ir::Plan& plan, const BoundPlan& bound, const exec::RunLimits& limits,
                  const StageGuards& guards, std::string& why_not) {
  const auto marks = guard_marks(plan, guards);
  fold::FoldInputs in;
  in.spec = &spec;
  in.plan = &plan;
  in.spec_params = spec_parameters(spec, bound);
  in.marks = &marks;
  std::optional<fold::Folded> f = fold::fold_depth(in, why_not);
  if (!f) return false;
  exec::LinkedPlan linked;
  BoundPlan folded_bound;
  try {
    linked = exec::link_plan(f->plan, limits.memory_bytes);
    folded_bound = resolve_bindings(f->spec, f->plan, limits.memory_bytes);
  } catch (const ResourceLimit&) {
    throw;
  } catch (const Error& e) {
    // The plan left is the plan with layers that link and bind alike taken out: it links
    // and binds as the plan did. Should it not, the plan is proven whole.
    why_not = "the plan with layers left out does not link: " + e.message();
    return false;
  }
  // The stages of the two layers kept before each stretch, forward and backward.
  const fold::GraphParams params = spec_parameters(f->spec, folded_bound);
  StageTexts texts;
  std::vector<std::pair<int64_t, int64_t>> pairs;  // labels to compare
  for (const auto& pair : f->pairs)
    for (size_t k = 0; k < pair.before.size(); ++k) {
      auto b = params.of.find(pair.before[k]), a = params.of.find(pair.after[k]);
      if (b == params.of.end() || a == params.of.end()) {
        why_not = "a layer kept reads no parameter '" + pair.before[k] + "'";
        return false;
      }
      pairs.emplace_back(fold::forward_label(b->second), fold::forward_label(a->second));
      pairs.emplace_back(fold::backward_label(b->second, params.count),
                         fold::backward_label(a->second, params.count));
    }
  for (const auto& [b, a] : pairs) {
    texts.wanted.insert(b);
    texts.wanted.insert(a);
  }
  CheckResult attempt = res;
  StageCounts counts;
  if (!prove_by_stages(attempt, options, f->spec, f->plan, linked, folded_bound, limits, guards,
                       counts, why_not, &texts))
    return false;
  for (const auto& [b, a] : pairs) {
    auto tb = texts.text.find(b), ta = texts.text.find(a);
    if (tb == texts.text.end() || ta == texts.text.end() || tb->second != ta->second) {
      why_not = "two layers kept in a row have different stage obligations";
      return false;
    }
  }
  attempt.stats.stages = counts.stages;
  attempt.stats.stages_proven = counts.distinct;
  attempt.stats.stages_reused = counts.reused;
  attempt.stats.collectives = f->collectives;
  attempt.stats.layers = f->layers;
  attempt.stats.layers_left_out = f->removed;
  res = std::move(attempt);
  return true;
}

}  // namespace onnx_tv::check
