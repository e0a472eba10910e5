#pragma once
// A deep plan with the inside of each run of layers left out (docs/design.md, section 4d).
//
// The spec's layers are found as a run of parameters whose texts repeat (fold/layer_run.h),
// and every rank program is cut into the same layers by the spec parameters its bindings give
// it. Within each program's stretch of layers that are the same, the first two are kept and
// the rest left out, in the spec and in every program holding them: what comes after the
// stretch reads from the second kept layer the values it read from the stretch's last, and
// the second reads, from what comes after, what the last one read (a stretch's last layer
// may read the next layer otherwise than the others: a pipeline stage's last receives).
// What is left out must be the second kept layer over again in every respect a proof could
// see: the text of each graph's layer (ops, attributes, constants, declared shapes, inputs by
// place), the bindings of its values (with the same regions on the same ranks), the marks the
// guards put on them, and the collectives, which must pair as before once the same layers are
// gone from every member. A layer that differs in one of these is kept, and the stretch ends
// there.
//
// What is left says nothing by itself: the check proves the plan left, stage by stage, and
// lifts its verdict only where the two kept layers of each stretch have the same stage
// obligations (`Folded::pairs`), which makes them a fixed point that every layer left out
// would have met again.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fold/layer_run.h"
#include "ir/graph.h"
#include "ir/plan.h"

namespace onnx_tv::fold {

struct FoldInputs {
  const ir::Graph* spec = nullptr;
  const ir::Plan* plan = nullptr;
  GraphParams spec_params;  // the spec's parameters, numbered in the order it first reads them
  // The marks the guards put on values: (rank, or -1 for the spec; value name) -> text.
  const std::map<std::pair<int64_t, std::string>, std::string>* marks = nullptr;
  // Layers kept at the start of each stretch of layers alike (at least 2): the last two are
  // the pair whose stage obligations must be the same.
  int64_t keep = 2;
};

struct Folded {
  ir::Graph spec;
  ir::Plan plan;
  // Per stretch left out: the spec parameters of the two layers kept just before it, place by
  // place. Their stage obligations must be the same for the verdict to stand.
  struct Pair {
    std::vector<std::string> before, after;
  };
  std::vector<Pair> pairs;
  int64_t layers = 0;       // layers in the spec's run
  int64_t removed = 0;      // layers left out
  int64_t collectives = 0;  // collectives of the plan before (as its linking counts them)
};

// nullopt when nothing can be left out; `why_not` then says why.
std::optional<Folded> fold_depth(const FoldInputs& in, std::string& why_not);

}  // namespace onnx_tv::fold
