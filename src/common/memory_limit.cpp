#include "common/memory_limit.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "common/errors.h"
#include "common/limits.h"
#include "common/memory_watchdog.h"

namespace onnx_tv {

size_t resident_bytes() {
  // read(2) and a hand parse: stdio's buffering and scanf cost more than the read itself.
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* p = buf;
  while (*p && *p != ' ') ++p;  // total pages, then resident pages
  if (*p != ' ') return 0;
  size_t resident = 0;
  bool digits = false;
  for (++p; *p >= '0' && *p <= '9'; ++p, digits = true) resident = resident * 10 + size_t(*p - '0');
  return digits ? resident * size_t(sysconf(_SC_PAGESIZE)) : 0;
}

size_t physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? size_t(pages) * size_t(size) : 0;
}

bool memory_exceeded(size_t limit) {
  thread_local unsigned calls = 0;  // instances may be proven in parallel (--jobs)
  if (limit == 0) return false;
  if (memory_over_limit()) return true;  // a watchdog saw it between two looks
  if (++calls % limits::kMemoryCheckEvery != 0) return false;
  // Linking and running thousands of ranks' nodes call this millions of times: the clock is
  // cheap, the read is not, and memory grows little in a millisecond.
  thread_local std::chrono::steady_clock::time_point last{};
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::microseconds(limits::kMemoryLookMicros)) return false;
  last = now;
  return resident_bytes() > limit;
}

std::string memory_limit_message(size_t limit, const std::string& where) {
  char amount[48];
  const double gb = double(limit) / double(1ull << 30);
  if (gb >= 1)
    std::snprintf(amount, sizeof amount, "%.1f GB", gb);
  else
    std::snprintf(amount, sizeof amount, "%.0f MB", gb * 1024);
  return "the check needs more than " + std::string(amount) +
         " of memory (the limit, --max-memory) and was stopped at " + where +
         "; a plan with fewer micro-batches, layers or ranks per stage needs less";
}

void memory_limit_reached(size_t limit, const std::string& where) {
  throw ResourceLimit(memory_limit_message(limit, where));
}

void check_memory(size_t limit, const std::string& where) {
  if (memory_exceeded(limit)) memory_limit_reached(limit, where);
}

void check_memory_now(size_t limit, const std::string& where) {
  if (limit != 0 && resident_bytes() > limit) memory_limit_reached(limit, where);
}

}  // namespace onnx_tv
