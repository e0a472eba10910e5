#pragma once
// Stage obligations: a deep plan proven at the cost of its distinct stages.
//
// The spec and the linked plan are cut into stages (check/stage_partition.h) and run stage by
// stage. Where a stage ends, every atom a value leaving it holds (a cut, a function of the
// stage's values) is replaced, on both sides alike, by a fresh symbol: later stages are then
// proven for every value of those symbols, so for the values they stand for too. Nothing later
// may unfold them, which is what makes a stage an obligation of its own: its inputs (symbols,
// and the forms each side holds over them), its spec nodes, its rank nodes and collectives.
//
// Written with its inputs' symbols numbered in order of appearance, ranks likewise, tensors by
// their place in the stage, that obligation is a text (stage_key.h). Two stages with one text
// compute one function of their inputs, up to the renaming of symbols and ranks the two
// numberings give, so the second is not run: its outputs are the first's, renamed, with fresh
// symbols for the ones the first made. A layer that differs in one constant, shape, attribute
// or collective group has another text and is run.
//
// Such a run only ever concludes EQUIVALENT: with symbols standing for values they may not
// reach, a difference is no refutation. Where its forms do not meet, or a guard of the fewer
// ranks, micro-batches or shrunk sums fires, it gives up and the plan is proven whole.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check/bindings.h"
#include "check/check.h"
#include "exec/executor.h"
#include "exec/linker.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/sum_site.h"

namespace onnx_tv::check {

// What the guards of the instance's shortcuts need (check/counted_replicas.h,
// check/counted_sums.h), judged stage by stage on the forms each stage proved.
struct StageGuards {
  bool count_guard = true;
  std::vector<std::string> rank_axes;  // mesh axes proven with fewer ranks
  const std::vector<std::vector<std::string>>* totals = nullptr;  // micro-batch sums
  size_t bodies = 0;
  const std::vector<reduce::SumSite>* sum_sites = nullptr;
  bool smaller = false;  // the instance is smaller than the plan (fewer tokens, ranks, ...)
};

struct StageCounts {
  int64_t stages = 0;    // stages that hold a node or a step
  int64_t distinct = 0;  // run
  int64_t reused = 0;    // not run: the same obligation as one run before
};

// The marks the guards put on values (sum sites, micro-batch sums): (rank, or -1 for the
// spec; value) -> text, part of every stage text that makes the value.
std::map<std::pair<int64_t, std::string>, std::string> guard_marks(const ir::Plan& plan,
                                                                   const StageGuards& guards);

// The texts of the stages asked for, by label (fold/param_labels.h), as a run wrote them: ""
// for a stage with nothing in it; absent where a stage had no text (it did not close, or its
// inputs held more than symbols).
struct StageTexts {
  std::set<int64_t> wanted;
  std::map<int64_t, std::string> text;
};

// Proves the instance stage by stage. True: every obligation holds (res.verdict is
// EQUIVALENT); false: this way does not conclude, and `why_not` says why (the caller then
// proves the plan whole). Input errors throw as the whole-program run's do.
bool prove_by_stages(CheckResult& res, const CheckOptions& options, const ir::Graph& spec,
                     const ir::Plan& plan, const exec::LinkedPlan& linked,
                     const BoundPlan& bound, const exec::RunLimits& limits,
                     const StageGuards& guards, StageCounts& counts, std::string& why_not,
                     StageTexts* texts = nullptr);

}  // namespace onnx_tv::check
