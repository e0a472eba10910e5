#include "common/memory_watchdog.h"

#include "common/memory_limit.h"

namespace onnx_tv {

namespace {
std::atomic<bool> g_over{false};
constexpr auto kInterval = std::chrono::milliseconds(50);
}  // namespace

bool memory_over_limit() { return g_over.load(std::memory_order_relaxed); }

MemoryWatchdog::MemoryWatchdog(size_t limit, std::function<void(size_t)> on_exceeded,
                               std::chrono::milliseconds grace)
    : limit_(limit), on_exceeded_(std::move(on_exceeded)), grace_(grace) {
  if (limit_ != 0) thread_ = std::thread([this] { watch(); });
}

MemoryWatchdog::~MemoryWatchdog() { stop(); }

bool MemoryWatchdog::stop() {
  const bool mine = !claimed_.exchange(true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  // on_exceeded ends the process for the command line; a caller that lost the claim waits
  // here rather than print beside it.
  if (thread_.joinable() && (mine || thread_.get_id() != std::this_thread::get_id()))
    thread_.join();
  g_over.store(false, std::memory_order_relaxed);
  return mine;
}

void MemoryWatchdog::watch() {
  using clock = std::chrono::steady_clock;
  bool over = false;
  clock::time_point over_since;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, kInterval, [this] { return stopping_; })) {
    const size_t resident = resident_bytes();
    if (resident <= limit_) {
      over = false;
      g_over.store(false, std::memory_order_relaxed);
      continue;
    }
    g_over.store(true, std::memory_order_relaxed);  // the check stops at its next look
    if (!over) over_since = clock::now();
    over = true;
    const bool far_over = resident > limit_ + limit_ / 4;
    if ((far_over || clock::now() - over_since >= grace_) && !claimed_.exchange(true)) {
      lock.unlock();
      on_exceeded_(resident);
      return;
    }
  }
}

}  // namespace onnx_tv
