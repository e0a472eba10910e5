#pragma once
// A thread that watches the process's resident memory against --max-memory. The phases of a
// check look at the limit between steps (common/memory_limit.h), but one step (a node whose
// symbolic values blow up, a solver pass) can take the machine's memory before the next look,
// and a process the system kills gives the user nothing. Past the limit the watchdog first asks
// the check to stop at its next look (memory_exceeded() turns true at once); if memory is still
// above the limit `grace` later, or passes it by a quarter, it calls `on_exceeded` from its own
// thread, which for the command line writes an UNKNOWN report and ends the process.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

namespace onnx_tv {

class MemoryWatchdog {
 public:
  MemoryWatchdog(size_t limit, std::function<void(size_t resident)> on_exceeded,
                 std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  ~MemoryWatchdog();
  MemoryWatchdog(const MemoryWatchdog&) = delete;
  MemoryWatchdog& operator=(const MemoryWatchdog&) = delete;

  // Ends the watching. Returns false when on_exceeded has already been called (or is being
  // called): the caller must then leave the output to it.
  bool stop();

 private:
  void watch();

  size_t limit_;
  std::function<void(size_t)> on_exceeded_;
  std::chrono::milliseconds grace_;
  std::atomic<bool> claimed_{false};  // the output belongs to whoever sets it first
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// Set by a watchdog past its limit; memory_exceeded() reads it on every call.
bool memory_over_limit();

}  // namespace onnx_tv
