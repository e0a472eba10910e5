#pragma once
// What a failing check reports: the failures ordered as a user reads them (refuted first, in
// the spec's output order), the first explained with its witness and the first diverging
// operators, or UNKNOWN where no point separates the two forms.
#include <string>
#include <vector>

#include "check/obligations.h"
#include "check/result.h"
#include "check/witness.h"
#include "exec/executor.h"
#include "exec/linker.h"

namespace onnx_tv::check {

// Orders `failed`, names every refuted spec output in res.failing_outputs, and explains the
// first in res (verdict, mismatch, message).
void report_failures(CheckResult& res, solver::Context& ctx, WitnessSearch& search,
                     const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                     const exec::LinkedPlan& linked, const std::vector<exec::Env>& envs,
                     const std::vector<Obligation>& obs, std::vector<Failure>& failed);

// One line on what a refutation found, for a message that cannot report it as a verdict
// ("" for a result without a mismatch).
std::string refutation_summary(const CheckResult& res);

}  // namespace onnx_tv::check
