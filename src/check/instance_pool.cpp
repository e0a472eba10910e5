#include "check/instance_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include <tbb/info.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "common/errors.h"

namespace onnx_tv::check {

void prove_instances(size_t count, int jobs, const std::function<InstanceEnd(size_t)>& prove,
                     const std::function<void(int64_t, int64_t)>& done,
                     const std::function<void()>& settle, const std::vector<size_t>& start,
                     FirstDecider* shared) {
  ONNX_TV_ASSERT(start.empty() || start.size() == count,
                 "a start order of " + std::to_string(start.size()) + " instances for " +
                     std::to_string(count));
  std::mutex lock;
  std::atomic<size_t> next{0};
  FirstDecider own(count);
  FirstDecider& decided = shared ? *shared : own;  // the first decider in grid order so far
  std::vector<char> beside(count, 0);  // ran while another did (not vector<bool>: threads)
  std::vector<size_t> running, again;
  int64_t finished = 0;
  auto worker = [&] {
    for (size_t p; (p = next++) < count;) {
      const size_t i = start.empty() ? p : start[p];
      if (i >= decided.at()) continue;  // after a decider in grid order: not started
      {
        std::lock_guard<std::mutex> hold(lock);
        for (size_t r : running) beside[r] = 1;
        beside[i] = !running.empty();
        running.push_back(i);
      }
      const InstanceEnd end = prove(i);
      std::lock_guard<std::mutex> hold(lock);
      std::erase(running, i);
      if (end == InstanceEnd::OverMemory && beside[i]) {
        again.push_back(i);
        continue;
      }
      if (end != InstanceEnd::Continues) decided.lower(i);
      done(++finished, int64_t(count));
    }
  };
  if (jobs <= 1 || count <= 1) {
    worker();
  } else {
    tbb::task_arena arena(int(std::min<size_t>(size_t(jobs), count)));
    arena.execute([&] {
      tbb::task_group group;
      for (int j = 0; j < arena.max_concurrency(); ++j) group.run(worker);
      group.wait();
    });
  }
  // Alone now, in grid order; every instance before each of them has ended for good.
  std::sort(again.begin(), again.end());
  for (size_t i : again) {
    if (i >= decided.at()) break;
    if (settle) settle();
    const InstanceEnd end = prove(i);
    done(++finished, int64_t(count));
    if (end != InstanceEnd::Continues) break;
  }
}

int resolve_jobs(int jobs, int processes_here) {
  if (jobs > 0) return jobs;
  const int cores = std::max(1, tbb::info::default_concurrency());
  return std::max(1, cores / std::max(1, processes_here));
}

}  // namespace onnx_tv::check
