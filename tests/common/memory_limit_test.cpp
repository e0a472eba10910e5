// Resident memory as the check reads it (common/memory_limit.h) agrees with what the kernel
// reports in /proc/self/status, and the limit is looked at, not skipped, past many calls.
#include "common/memory_limit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace onnx_tv {
namespace {

size_t status_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      size_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

TEST(MemoryLimit, ResidentBytesAgreesWithTheKernel) {
  std::vector<char> held(64 << 20, 1);  // 64 MB touched: resident
  const size_t a = resident_bytes(), b = status_rss_bytes();
  ASSERT_GT(b, size_t(64) << 20);
  EXPECT_GT(a, b - (b >> 3)) << a << " vs " << b;
  EXPECT_LT(a, b + (b >> 3)) << a << " vs " << b;
  EXPECT_EQ(held[held.size() - 1], 1);
}

TEST(MemoryLimit, PastTheLimitIsSeenWithinAFewCalls) {
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the last look's interval
  bool seen = false;
  for (int i = 0; i < 64 && !seen; ++i) seen = memory_exceeded(1);  // 1 byte: always past
  EXPECT_TRUE(seen);
  EXPECT_FALSE(memory_exceeded(0));  // 0: no limit
}

}  // namespace
}  // namespace onnx_tv
