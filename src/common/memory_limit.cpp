#include "common/memory_limit.h"

#include <unistd.h>

#include <cstdio>

#include "common/errors.h"
#include "common/limits.h"
#include "common/memory_watchdog.h"

namespace onnx_tv {

size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return got == 2 ? size_t(resident) * size_t(sysconf(_SC_PAGESIZE)) : 0;
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
