#pragma once
// An instance proven with the inside of its runs of layers left out (fold/depth_fold.h,
// docs/design.md section 4d). The plan left is proven stage by stage; its verdict stands for
// the instance only where the two layers kept before each stretch left out have the same
// stage obligations, forward and backward. Then every layer left out, built as the kept one
// and fed what the kept one is fed, would have had those obligations again: the staged run
// of the whole instance would have proven it the same way.
#include <string>

#include "check/bindings.h"
#include "check/check.h"
#include "check/stage_run.h"
#include "exec/executor.h"
#include "ir/graph.h"
#include "ir/plan.h"

namespace onnx_tv::check {

// True when the instance is proven so (`res` then holds the EQUIVALENT verdict of the plan
// left, with the layers left out in its stats); false with `why_not` when nothing is left out
// or the plan left does not prove the instance, which is then proven whole.
bool prove_folded(CheckResult& res, const CheckOptions& options, const ir::Graph& spec,
                  const ir::Plan& plan, const BoundPlan& bound, const exec::RunLimits& limits,
                  const StageGuards& guards, std::string& why_not);

}  // namespace onnx_tv::check
