#pragma once
// Cuts of a plan to fewer micro-batches (reduce/micro_batches.h), made once for each choice of
// ranks of a grid of instances and given, moved, to the instances that keep them.
//
// Instances that keep the same ranks and differ only in their count of micro-batches (dp3 with
// 2 and with 3 micro-batches) cut the same plan: linking it with every micro-batch and finding
// its bodies is the largest step of such an instance (millions of steps at 405B), so the first
// instance of those ranks to ask does it once and cuts it to every count of the grid's
// instances with those ranks that this process proves; the plan of every micro-batch is then
// let go. Each cut is the one that instance would have made itself (cut_to_count), so what an
// instance proves does not depend on which instance made its cut.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "check/check.h"
#include "reduce/mesh_axes.h"
#include "reduce/micro_batches.h"

namespace onnx_tv::check {

class MadeCuts {
 public:
  using Cut = std::optional<reduce::MicroBatchCut>;  // nullopt where the bodies did not cut
  using Ranks = std::map<std::string, int64_t>;      // ranks kept per shrunk axis
  struct Made {
    std::map<int64_t, Cut> cuts;  // by count of micro-batches kept
    std::string why_not;          // why no bodies were found, for the report ("" when found)
  };
  // Makes the cuts of one choice of ranks, to each of `counts`.
  using Maker = std::function<Made(const std::vector<int64_t>& counts)>;

  // For the grid of `first` (reduce::count_grid): the counts this process (`spread`) proves
  // for each choice of ranks.
  MadeCuts(const reduce::FewerRanks& first, const CheckOptions::Spread& spread);

  // The ranks an instance keeps: its count on each shrunk axis.
  static Ranks ranks_of(const reduce::FewerRanks& fewer);

  // The counts of micro-batches this process proves with `ranks`, in grid order.
  std::vector<int64_t> counts(const Ranks& ranks) const;

  // Before any instance runs (no lock): the cuts of `ranks`, made ahead.
  void put(const Ranks& ranks, Made made);

  // The cut for `count` micro-batches of an instance keeping `ranks`, moved out; `why_not` is
  // set beside it. Where none was made for those ranks, `make` makes them all, once: an instance
  // of the same ranks asking meanwhile waits for it. nullopt where the cut was taken (an
  // instance proven again, alone, after running out of memory beside another): the caller then
  // cuts its own. Should `make` throw, nothing is made and the next to ask makes them.
  std::optional<Cut> take(const Ranks& ranks, int64_t count, const Maker& make,
                          std::string& why_not);

  // How many cuts of `ranks` are made and not taken yet.
  size_t held(const Ranks& ranks);

 private:
  struct Entry {
    std::mutex lock;  // held while the cuts are made
    bool made = false;
    Made cuts;
  };
  Entry& entry(const Ranks& ranks);

  std::map<Ranks, std::vector<int64_t>> counts_;
  std::mutex lock_;  // guards entries_ (not the entries themselves)
  std::map<Ranks, std::unique_ptr<Entry>> entries_;
};

}  // namespace onnx_tv::check
