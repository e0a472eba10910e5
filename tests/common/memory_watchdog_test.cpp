// The watchdog: past its limit it first turns memory_exceeded() true for the check's next
// look, then calls its handler once; a stop before that keeps the output the caller's.
#include "common/memory_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/memory_limit.h"

namespace onnx_tv {
namespace {

using namespace std::chrono_literals;

TEST(MemoryWatchdog, PastTheLimitAsksTheCheckToStopThenCallsTheHandlerOnce) {
  std::atomic<int> calls{0};
  std::atomic<size_t> seen{0};
  // 1 byte: any process is past it.
  MemoryWatchdog w(1, [&](size_t resident) {
    seen = resident;
    ++calls;
  }, 300ms);
  bool flagged = false;
  for (int i = 0; i < 100 && !flagged; ++i) {
    std::this_thread::sleep_for(10ms);
    flagged = memory_over_limit();
  }
  EXPECT_TRUE(flagged);
  EXPECT_TRUE(memory_exceeded(1));  // at once, not every kMemoryCheckEvery-th call
  for (int i = 0; i < 200 && calls == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(calls, 1);
  EXPECT_GT(seen.load(), 0u);
  EXPECT_FALSE(w.stop());  // the handler owns the output
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(memory_over_limit());
}

TEST(MemoryWatchdog, UnderTheLimitStaysQuiet) {
  std::atomic<int> calls{0};
  MemoryWatchdog w(size_t(1) << 50, [&](size_t) { ++calls; }, 10ms);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(memory_over_limit());
  EXPECT_TRUE(w.stop());
  EXPECT_EQ(calls, 0);
}

TEST(MemoryWatchdog, StopBeforeTheGraceKeepsTheOutput) {
  std::atomic<int> calls{0};
  // Just under this process's memory: over the limit, not by a quarter.
  const size_t limit = resident_bytes() / 10 * 9;
  ASSERT_GT(limit, 0u);
  MemoryWatchdog w(limit, [&](size_t) { ++calls; }, std::chrono::milliseconds(60000));
  std::this_thread::sleep_for(150ms);
  EXPECT_TRUE(memory_over_limit());
  EXPECT_TRUE(w.stop());
  EXPECT_EQ(calls, 0);
}

TEST(MemoryWatchdog, NoLimitNoThread) {
  MemoryWatchdog w(0, [](size_t) { FAIL() << "no limit, no handler"; });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(memory_over_limit());
  EXPECT_TRUE(w.stop());
}

}  // namespace
}  // namespace onnx_tv
