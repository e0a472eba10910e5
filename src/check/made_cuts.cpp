#include "check/made_cuts.h"

#include <algorithm>

namespace onnx_tv::check {

MadeCuts::MadeCuts(const reduce::FewerRanks& first, const CheckOptions::Spread& spread) {
  if (!first.micro_batches) return;
  const auto grid = reduce::count_grid(first);
  const size_t processes = size_t(std::max(1, spread.processes));
  for (size_t k = size_t(std::max(0, spread.process)); k < grid.size(); k += processes) {
    Ranks ranks = grid[k];
    auto n = ranks.find(reduce::kMicroBatches);
    if (n == ranks.end()) continue;
    const int64_t count = n->second;
    ranks.erase(n);
    auto& mine = counts_[ranks];
    if (std::find(mine.begin(), mine.end(), count) == mine.end()) mine.push_back(count);
  }
}

MadeCuts::Ranks MadeCuts::ranks_of(const reduce::FewerRanks& fewer) {
  Ranks out;
  for (size_t a = 0; a < fewer.axes.size() && a < fewer.counts.size(); ++a)
    out[fewer.axes[a]] = fewer.counts[a];
  return out;
}

std::vector<int64_t> MadeCuts::counts(const Ranks& ranks) const {
  auto it = counts_.find(ranks);
  return it == counts_.end() ? std::vector<int64_t>{} : it->second;
}

MadeCuts::Entry& MadeCuts::entry(const Ranks& ranks) {
  std::lock_guard<std::mutex> hold(lock_);
  auto& e = entries_[ranks];
  if (!e) e = std::make_unique<Entry>();
  return *e;
}

void MadeCuts::put(const Ranks& ranks, Made made) {
  Entry& e = entry(ranks);
  e.cuts = std::move(made);
  e.made = true;
}

std::optional<MadeCuts::Cut> MadeCuts::take(const Ranks& ranks, int64_t count, const Maker& make,
                                            std::string& why_not) {
  Entry& e = entry(ranks);
  std::lock_guard<std::mutex> hold(e.lock);
  if (!e.made) {
    std::vector<int64_t> wanted = counts(ranks);
    if (std::find(wanted.begin(), wanted.end(), count) == wanted.end()) wanted.push_back(count);
    e.cuts = make(wanted);
    e.made = true;
  }
  why_not = e.cuts.why_not;
  auto it = e.cuts.cuts.find(count);
  if (it == e.cuts.cuts.end()) return std::nullopt;
  std::optional<Cut> out(std::move(it->second));
  e.cuts.cuts.erase(it);
  return out;
}

size_t MadeCuts::held(const Ranks& ranks) {
  Entry& e = entry(ranks);
  std::lock_guard<std::mutex> hold(e.lock);
  return e.cuts.cuts.size();
}

}  // namespace onnx_tv::check
