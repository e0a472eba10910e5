#pragma once
// Proving one instance of a plan (one choice of ranks and micro-batches kept): reduced, then
// proven stage-wise or whole (check.cpp). Private to src/check, shared with prove_grid.cpp.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "check/bindings.h"
#include "check/check.h"
#include "check/full_bound.h"
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

// Cuts made ahead of the instances (cut_first), one per count of micro-batches kept (nullopt
// where the bodies did not cut). Each goes to the one instance keeping its count, moved, not
// copied, so it is let go as that instance ends instead of staying while the grid runs.
// Threads take different counts; an instance proven again (alone, after running out of
// memory beside another) finds its cut taken and links and cuts the plan itself, as it would
// with nothing known.
class MadeCuts {
 public:
  using Cut = std::optional<reduce::MicroBatchCut>;
  // Before any instance runs (no lock).
  void put(std::map<int64_t, Cut> cuts) { cuts_ = std::move(cuts); }

  // The cut for `count`, moved out; nullopt when none was made or it was taken.
  std::optional<Cut> take(int64_t count) {
    std::lock_guard<std::mutex> hold(lock_);
    auto it = cuts_.find(count);
    if (it == cuts_.end()) return std::nullopt;
    std::optional<Cut> out(std::move(it->second));
    cuts_.erase(it);
    return out;
  }

 private:
  std::mutex lock_;
  std::map<int64_t, Cut> cuts_;
};

// What choosing found on the plan of an instance already (linked, its micro-batches), so the
// instance does not find it again; null where nothing was.
// With `cuts`, the plan was cut to each count of micro-batches kept from `linked` and
// `micro_batches`, and `linked` may be null: the cuts are much smaller than the plan of every
// micro-batch, which need not stay alive while the grid runs.
struct Known {
  const exec::LinkedPlan* linked = nullptr;
  const reduce::MicroBatches* micro_batches = nullptr;
  MadeCuts* cuts = nullptr;

  // The cut made for `count` micro-batches, taken; nullopt when none is left.
  std::optional<MadeCuts::Cut> take_cut(int64_t count) const {
    return cuts ? cuts->take(count) : std::nullopt;
  }
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
