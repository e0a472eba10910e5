#pragma once
// Allocator for the large hash tables of the store. Their probes land on random pages, so with
// ordinary pages nearly every probe of a table of hundreds of megabytes also misses the TLB;
// on Linux, blocks of 2 MiB and more are aligned to huge pages and marked for them.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <memory>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace onnx_tv::solver {

template <class T>
struct TableAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(1) << 21;

  TableAllocator() = default;
  template <class U>
  TableAllocator(const TableAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return std::allocator<T>().allocate(n);
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHuge) std::allocator<T>().deallocate(p, n);
    else std::free(p);
  }
  template <class U>
  bool operator==(const TableAllocator<U>&) const { return true; }
};

}  // namespace onnx_tv::solver
