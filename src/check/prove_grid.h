#pragma once
// The grid of instances of one choice of fewer ranks (every combination of 2 and 3 along the
// shrunk axes and micro-batches), proven one after another, `--jobs` at a time, or shared out
// among processes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/full_bound.h"
#include "check/instance.h"

namespace onnx_tv::check {

// What the full plan looks like to every instance of one choice of fewer ranks.
struct FullPlan {
  const ir::Graph& spec;
  const ir::Plan& plan;
  const FullBound& bound;
  Known first;  // what is known of the first instance's plan (the full plan when no axis shrinks)
};

// Proves every instance of the grid of `first` (one when no axis shrinks), sequentially or
// `jobs` at a time; with several processes (CheckOptions::spread) each proves its share and
// all exchange their outcomes. The first instance in grid order that asks for another choice
// (its reasons are then added to `kept`) or is not EQUIVALENT decides; all EQUIVALENT, the
// last one reports. nullopt: choose again. `proven[p]` counts the instances process p proved.
std::optional<CheckResult> prove_grid(const CheckResult& start, const CheckOptions& options,
                                      const FullPlan& full, const reduce::FewerRanks& first,
                                      reduce::KeptWhole& kept, std::vector<std::string>& warnings,
                                      std::vector<int64_t>& proven);

// The plan of `first` (linked as `linked`, its micro-batches `mb`) cut to every count of
// micro-batches that an instance with first's ranks keeps, among the instances this process
// proves (all of them without mpirun); nullopt where the bodies do not cut.
std::map<int64_t, std::optional<reduce::MicroBatchCut>> cut_first(
    const reduce::FewerRanks& first, const exec::LinkedPlan& linked,
    const reduce::MicroBatches& mb, const CheckOptions::Spread& spread);

}  // namespace onnx_tv::check
