#pragma once
// Shape reduction: a real-size plan is proven by proving a small instance of the same plan.
// LLM operators are SIMD along their dimensions or commutative-associative reductions, so when
// the plan and the spec agree on an instance that keeps the plan's partition structure (every
// piece of a cut dimension keeps at least two elements, every slice boundary of every binding,
// collective and slice stays a boundary), they agree at full size (TrainVerify, appendix C).
// docs/shape-reduction.md gives the argument and the assumptions it rests on.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/linker.h"
#include "reduce/reduced_dim.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/mesh_axes.h"
#include "reduce/sum_site.h"

namespace onnx_tv::reduce {

struct Reduced {
  ir::Graph spec;
  ir::Plan plan;
  std::vector<ReducedDim> dims;  // every axis of every spec input, as the report shows it
  // Besides `dims`, where positions are named at full size (full_position): every axis of the
  // spec's outputs and of the initializers bindings make symbolic, and a row with axis -1 for
  // each of these values and the spec inputs that has rank 0.
  std::vector<ReducedDim> other_dims;
  std::vector<std::string> kept_full;  // every reason a factor keeps its full size, once each
  int64_t full_elements = 0;            // elements of every tensor of the spec and the ranks
  int64_t reduced_elements = 0;
  std::vector<SumSite> sum_sites;
};

// The reduced instance, or the reason none can be built soundly (`why`). Never throws for the
// user's files: what reduction cannot follow only means checking at full size.
struct Outcome {
  std::optional<Reduced> reduced;
  std::string why;
  std::optional<KeepRanks> keep_ranks;
};

// `fewer` holds the plan (the ranks kept by choose_fewer_ranks, or all_ranks) and `linked`
// links it. When an axis chosen to shrink cannot, the outcome says which (keep_ranks): choose
// again keeping it. `kept` holds the sum sites (counted_sum_key) an earlier instance found
// counting their axis, which keep it whole.
// `memory_bytes` bounds the process's resident memory while inference runs (0: none; past it
// ResourceLimit, never a fallback).
Outcome reduce_plan(const ir::Graph& spec, const FewerRanks& fewer,
                    const exec::LinkedPlan& linked, const KeptWhole& kept = {},
                    size_t memory_bytes = 0);

}  // namespace onnx_tv::reduce
