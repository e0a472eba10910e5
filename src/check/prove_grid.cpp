#include "check/prove_grid.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "check/instance_pool.h"
#include "check/outcome_wire.h"
#include "common/errors.h"
#include "common/memory_limit.h"
#include "common/memory_watchdog.h"

namespace onnx_tv::check {

namespace {

// Whether two points of a grid keep the same ranks (they may differ in micro-batches).
bool same_ranks(std::map<std::string, int64_t> a, std::map<std::string, int64_t> b) {
  a.erase(reduce::kMicroBatches);
  b.erase(reduce::kMicroBatches);
  return a == b;
}

}  // namespace

std::map<int64_t, std::optional<reduce::MicroBatchCut>> cut_first(
    const reduce::FewerRanks& first, const exec::LinkedPlan& linked,
    const reduce::MicroBatches& mb, const CheckOptions::Spread& spread) {
  std::map<int64_t, std::optional<reduce::MicroBatchCut>> cuts;
  // As try_instance cuts: the bodies found on this plan, kept to the instance's count.
  for (int64_t n : MadeCuts(first, spread).counts(MadeCuts::ranks_of(first)))
    cuts[n] = cut_to_count(first.plan, linked, mb, first.micro_batches, n);
  return cuts;
}

std::optional<CheckResult> prove_grid(const CheckResult& start, const CheckOptions& options,
                                      const FullPlan& full, const reduce::FewerRanks& first,
                                      reduce::KeptWhole& kept, std::vector<std::string>& warnings,
                                      std::vector<int64_t>& proven) {
  const auto grid = reduce::count_grid(first);
  std::vector<CheckResult> results(grid.size(), start);
  std::vector<reduce::KeptWhole> keeps(grid.size(), kept);
  std::vector<Tried> tried(grid.size(), Tried::Done);
  std::vector<char> ran(grid.size(), 0);  // not vector<bool>: threads set their own entries
  // An instance's error is raised only where grid order reaches it, as in a sequential run.
  std::vector<std::exception_ptr> errors(grid.size());
  const reduce::KeptWhole kept_before = kept;
  // The first instance in grid order known to decide, so far. One after it that is still
  // running (started beside it) is abandoned at its next progress: its outcome cannot count.
  FirstDecider decider(grid.size());
  struct Abandoned {};
  auto one = [&](size_t k, const CheckOptions& o) {  // instance k from the start
    ran[k] = 1;
    results[k] = start;
    keeps[k] = kept_before;
    errors[k] = nullptr;
    tried[k] = Tried::Done;
    bool over_memory = false;
    try {
      const reduce::FewerRanks fewer =
          k == 0 ? first : reduce::with_counts(full.plan, first, grid[k]);
      // An instance with the first one's ranks (2 on every axis; its micro-batches may
      // differ) has its plan: what is known of that plan holds. The cuts are every
      // instance's to share.
      const Known known =
          same_ranks(grid[k], grid[0]) ? full.first : Known{nullptr, nullptr, full.first.cuts};
      tried[k] = try_instance(results[k], o, full.spec, fewer, known, full.bound, keeps[k]);
    } catch (const Abandoned&) {
      ran[k] = 0;
      return InstanceEnd::Continues;  // after the decider: nothing to say
    } catch (const ResourceLimit&) {
      errors[k] = std::current_exception();
      over_memory = true;
    } catch (...) {
      errors[k] = std::current_exception();
    }
    if (over_memory) return InstanceEnd::OverMemory;
    return errors[k] || tried[k] == Tried::Again || results[k].verdict != Verdict::Equivalent
               ? InstanceEnd::Decides
               : InstanceEnd::Continues;
  };
  const CheckOptions::Spread& spread = options.spread;
  const int processes = std::max(1, spread.processes);
  std::vector<size_t> mine;  // this process's share, every processes-th instance
  for (size_t k = size_t(spread.process); k < grid.size(); k += size_t(processes)) mine.push_back(k);
  const int jobs = resolve_jobs(options.jobs, spread.processes_here);
  if (processes == 1 && (jobs <= 1 || grid.size() == 1)) {
    for (size_t k = 0; k < grid.size(); ++k) {
      CheckOptions labelled = options;  // "instance 2/4: spec (stage-wise)"
      if (grid.size() > 1 && options.on_progress)
        labelled.on_progress = [&, k](const Progress& p) {
          options.on_progress(Progress{"instance " + std::to_string(k + 1) + "/" +
                                           std::to_string(grid.size()) + ": " + p.phase,
                                       p.done, p.total});
        };
      if (one(k, labelled) != InstanceEnd::Continues) break;
    }
  } else if (!mine.empty()) {
    // Progress as instances done, one thread at a time; each instance's own phases would
    // interleave, but still reach the caller as that count (a caller stops the check from
    // its progress callback).
    const int64_t total = int64_t(mine.size());
    std::mutex progress;
    int64_t done = 0;
    CheckOptions quiet = options;
    if (options.on_progress)
      quiet.on_progress = [&](const Progress&) {
        std::lock_guard<std::mutex> hold(progress);
        report(options, "instances", done, total);
      };
    // Before an instance is proven again alone: what the others freed goes back to the
    // system, and the watchdog's sign of memory over the limit (a look every few tens of
    // milliseconds) has caught up.
    auto settle = [&] {
      if (options.release_memory) options.release_memory();
      const size_t limit = run_limits(options).memory_bytes;
      for (int i = 0; i < 40 && limit && (memory_over_limit() || resident_bytes() > limit); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    };
    // The first instance of each choice of ranks starts before the second of any: it makes
    // the cuts its siblings take (check/made_cuts.h), which they would otherwise wait for
    // while the other threads had nothing to do.
    std::vector<size_t> start(mine.size());
    std::vector<size_t> nth(mine.size(), 0);  // among the instances of its ranks before it
    for (size_t i = 0; i < mine.size(); ++i) {
      start[i] = i;
      for (size_t j = 0; j < i; ++j) nth[i] += same_ranks(grid[mine[i]], grid[mine[j]]);
    }
    std::stable_sort(start.begin(), start.end(), [&](size_t a, size_t b) { return nth[a] < nth[b]; });
    report(options, "instances", 0, total);
    auto started = [&](size_t i) {
      const size_t k = mine[i];
      CheckOptions o = quiet;
      o.on_progress = [&, k](const Progress& p) {
        if (decider.precedes(k)) throw Abandoned{};
        if (quiet.on_progress) quiet.on_progress(p);
      };
      return one(k, o);
    };
    prove_instances(
        mine.size(), jobs, started,
        [&](int64_t d, int64_t n) {
          std::lock_guard<std::mutex> hold(progress);
          report(options, "instances", done = d, n);
        },
        settle, start, &decider);
  }
  proven.resize(size_t(processes), 0);
  if (processes > 1) {
    std::vector<InstanceOutcome> outcomes;
    for (size_t k : mine) {
      if (!ran[k]) continue;
      InstanceOutcome o{k, tried[k] == Tried::Again, results[k], keeps[k], "", ""};
      if (errors[k]) describe_error(errors[k], o.error_kind, o.error_message);
      outcomes.push_back(std::move(o));
    }
    const std::vector<std::string> all = spread.exchange(encode_outcomes(outcomes));
    ONNX_TV_ASSERT(all.size() == size_t(processes),
                   "outcomes from " + std::to_string(all.size()) + " processes, not " +
                       std::to_string(processes));
    for (size_t p = 0; p < all.size(); ++p) {
      if (int(p) == spread.process) {
        proven[p] += int64_t(outcomes.size());
        continue;
      }
      for (InstanceOutcome& o : decode_outcomes(all[p])) {
        ONNX_TV_ASSERT(o.instance < grid.size() && o.instance % size_t(processes) == p,
                       "process " + std::to_string(p) + " sent instance " +
                           std::to_string(o.instance) + " of " + std::to_string(grid.size()));
        ++proven[p];
        const size_t k = o.instance;
        ran[k] = 1;
        tried[k] = o.again ? Tried::Again : Tried::Done;
        results[k] = std::move(o.result);
        keeps[k] = std::move(o.kept);
        if (!o.error_kind.empty()) errors[k] = error_from(o.error_kind, o.error_message);
      }
    }
  } else {
    proven[0] += std::count(ran.begin(), ran.end(), 1);
  }
  for (size_t k = 0; k < grid.size(); ++k) {
    // An instance not proven follows one of its process's that decides, and so a decider.
    ONNX_TV_ASSERT(ran[k], "instance " + std::to_string(k) + " was not proven");
    if (errors[k]) std::rethrow_exception(errors[k]);
    if (tried[k] == Tried::Again) {
      kept = keeps[k];
      warnings = results[k].warnings;
      return std::nullopt;
    }
    if (results[k].verdict != Verdict::Equivalent) return std::move(results[k]);
    if (k + 1 == grid.size()) {  // every instance EQUIVALENT: the stages of all of them
      for (size_t j = 0; j + 1 < grid.size(); ++j) {
        results[k].stats.stages += results[j].stats.stages;
        results[k].stats.stages_proven += results[j].stats.stages_proven;
        results[k].stats.stages_reused += results[j].stats.stages_reused;
        results[k].stats.layers = std::max(results[k].stats.layers, results[j].stats.layers);
        results[k].stats.layers_left_out += results[j].stats.layers_left_out;
      }
      return std::move(results[k]);
    }
  }
  ONNX_TV_ASSERT(false, "no instance decided the check");
  return std::nullopt;
}

}  // namespace onnx_tv::check
