#pragma once
// Proving one instance of a plan (one choice of ranks and micro-batches kept): reduced, then
// proven stage-wise or whole (check.cpp). Private to src/check, shared with prove_grid.cpp.
#include <cstdint>
#include <optional>
#include <string>

#include "check/bindings.h"
#include "check/check.h"
#include "check/full_bound.h"
#include "check/made_cuts.h"
#include "exec/executor.h"
#include "exec/linker.h"
#include "reduce/micro_batches.h"
#include "reduce/reduce.h"

namespace onnx_tv::check {

// Passes progress to the caller, when it asked for it.
void report(const CheckOptions& o, const std::string& phase, int64_t done, int64_t total);

// The limits a run of `o` holds to (memory, elements per node, trace).
exec::RunLimits run_limits(const CheckOptions& o);

// What proving one instance came to: a result, or a reason to choose the ranks again.
enum class Tried { Done, Again };

// What choosing found on the plan of an instance already (linked, its micro-batches), so the
// instance does not find it again; null where nothing was. `cuts`, shared by the grid's
// instances, holds the cuts to fewer micro-batches made for each choice of ranks (made ahead
// for the first instance's ranks, whose plan of every micro-batch need not then stay alive
// while the grid runs: `linked` is null).
struct Known {
  const exec::LinkedPlan* linked = nullptr;
  const reduce::MicroBatches* micro_batches = nullptr;
  MadeCuts* cuts = nullptr;
};

// `plan` (linked as `linked`) cut to `count` micro-batches from the bodies `mb` found on it;
// nullopt unless those are as many as the count the instances were chosen from (`chosen`).
// Every cut of a check is made here, so the instances and the cuts made ahead agree.
std::optional<reduce::MicroBatchCut> cut_to_count(const ir::Plan& plan,
                                                  const exec::LinkedPlan& linked,
                                                  const reduce::MicroBatches& mb, int64_t chosen,
                                                  int64_t count);

// Reduces and proves the instance holding the ranks `fewer` kept; `res` gets its result.
// Again: the instance asks for another choice of ranks, its reasons added to `kept`.
Tried try_instance(CheckResult& res, const CheckOptions& options, const ir::Graph& full_spec,
                   const reduce::FewerRanks& fewer, const Known& known,
                   const FullBound& full_bound, reduce::KeptWhole& kept);

}  // namespace onnx_tv::check
