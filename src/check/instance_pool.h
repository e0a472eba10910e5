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

// Proves `count` instances (0 .. count-1, in grid order) on up to `jobs` threads; prove(i)
// starts instance i afresh each time it is called. done(d, n) is called, one thread at a time,
// after each instance that ended for good. settle(), when given, is called before each
// instance proven again alone: the memory the others freed is then given back, so that the
// limit measures that instance alone.
void prove_instances(size_t count, int jobs, const std::function<InstanceEnd(size_t)>& prove,
                     const std::function<void(int64_t done, int64_t total)>& done,
                     const std::function<void()>& settle = {});

// The threads `jobs` asks for: itself when positive; otherwise the cores this process may use,
// shared among `processes_here` processes on this machine (mpirun starting several).
int resolve_jobs(int jobs, int processes_here);

}  // namespace onnx_tv::check
