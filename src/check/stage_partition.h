#pragma once
// Where a check's stage obligations begin and end (check/stage_run.h). A stage is labelled by
// the parameters around it: a value computed after reading parameter p, and before any value
// downstream of it reads a later one, belongs to the forward stage of p; a value computed once
// every parameter is read, upstream of the last read of p, to the backward stage of p. The
// spec and every rank are labelled alike (a rank's parameters are the spec inputs its bindings
// give it), so the two sides of one layer land in one stage, and the layers of a deep model
// in stages that repeat. Labels only decide how the work is cut; what makes a stage's proof
// sound is how it is proven (stage_run.h), whatever the labels.
#include <cstdint>
#include <vector>

#include "check/bindings.h"
#include "exec/linker.h"
#include "fold/layer_run.h"
#include "fold/param_labels.h"
#include "ir/plan.h"
#include "ir/graph.h"

namespace onnx_tv::check {

struct StagePartition {
  std::vector<int64_t> spec_stage;  // per spec node
  std::vector<int64_t> step_stage;  // per step of the linked plan
  // Labels run from 0 to stages - 1 in an order the dataflow respects: every input of a node
  // or step is produced in its own stage or an earlier one.
  int64_t stages = 0;
};

// Spec parameters (graph inputs and the initializers bindings make symbolic), numbered in the
// order the spec first reads them.
fold::GraphParams spec_parameters(const ir::Graph& spec, const BoundPlan& bound);

StagePartition partition_stages(const ir::Graph& spec, const ir::Plan& plan,
                                const exec::LinkedPlan& linked, const BoundPlan& bound);

}  // namespace onnx_tv::check
