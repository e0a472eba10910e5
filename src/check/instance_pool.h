#pragma once
// The instances of a grid (the counts of fewer ranks and micro-batches) proven `jobs` at a time.
// Each is an independent proof, so any order gives the same verdict provided the first in grid
// order that decides is the one that counts: instances after a decider are not started, those
// before it always finish.
//
// Several at once hold several symbolic stores, and the memory limit is the process's. An
// instance stopped by the limit while another ran beside it says nothing about itself: it is
// proven again alone, after the others, before anything after it in grid order can decide. One
// stopped by the limit while alone decides (UNKNOWN), as with one job.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace onnx_tv::check {

// What proving one instance came to, for the pool.
enum class InstanceEnd {
  Continues,   // EQUIVALENT: the next instance in grid order still has a say
  Decides,     // another verdict, an error, or a reason to choose the ranks again
  OverMemory,  // stopped by the memory limit
};

// The first instance in grid order known to decide so far, shared by the threads of a grid:
// an instance after it that is still running cannot change the outcome and may stop.
class FirstDecider {
 public:
  explicit FirstDecider(size_t count) : at_(count) {}
  void lower(size_t k) {
    for (size_t d = at_.load(); k < d && !at_.compare_exchange_weak(d, k);) {
    }
  }
  size_t at() const { return at_.load(); }
  bool precedes(size_t k) const { return at() < k; }

 private:
  std::atomic<size_t> at_;
};

// Proves `count` instances (0 .. count-1, in grid order) on up to `jobs` threads; prove(i)
// starts instance i afresh each time it is called. done(d, n) is called, one thread at a time,
// after each instance that ended for good. settle(), when given, is called before each
// instance proven again alone: the memory the others freed is then given back, so that the
// limit measures that instance alone. `start`, when given, is the order the threads start
// them in (a permutation of 0 .. count-1); what decides is still the first in grid order.
// `decider`, when given, is where the pool keeps that first decider, for the instances to see.
void prove_instances(size_t count, int jobs, const std::function<InstanceEnd(size_t)>& prove,
                     const std::function<void(int64_t done, int64_t total)>& done,
                     const std::function<void()>& settle = {},
                     const std::vector<size_t>& start = {}, FirstDecider* decider = nullptr);

// The threads `jobs` asks for: itself when positive; otherwise the cores this process may use,
// shared among `processes_here` processes on this machine (mpirun starting several).
int resolve_jobs(int jobs, int processes_here);

}  // namespace onnx_tv::check
