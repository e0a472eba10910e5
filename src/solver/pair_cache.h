#pragma once
// A memo from a pair of 32-bit ids to a 32-bit id, open addressing with linear probing.
// Monomial products are looked up once per term pair of every polynomial product; a node-based
// map costs a pointer chase and an allocation per entry there, this costs one probe.
#include <cstdint>
#include <vector>

#include "solver/table_allocator.h"

namespace onnx_tv::solver {

class PairCache {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;

  uint32_t find(uint32_t a, uint32_t b) const {
    if (slots_.empty()) return kNone;
    const uint64_t key = pack(a, b);
    const size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == kEmpty) return kNone;
    }
  }

  void insert(uint32_t a, uint32_t b, uint32_t value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(pack(a, b), value);
    ++count_;
  }

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
  };
  // Ids are indices of stored nodes, so (kNone, kNone) never occurs as a key.
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static uint64_t pack(uint32_t a, uint32_t b) { return (uint64_t(a) << 32) | b; }
  static size_t slot_of(uint64_t key) {
    key = (key ^ (key >> 31)) * 0x9e3779b97f4a7c15ULL;
    return size_t(key ^ (key >> 29));
  }
  void place(uint64_t key, uint32_t value) {
    const size_t mask = slots_.size() - 1;
    size_t i = slot_of(key) & mask;
    while (slots_[i].key != kEmpty) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
  }
  void grow() {
    std::vector<Slot, TableAllocator<Slot>> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{kEmpty, 0});
    for (const Slot& s : old)
      if (s.key != kEmpty) place(s.key, s.value);
  }

  std::vector<Slot, TableAllocator<Slot>> slots_;
  size_t count_ = 0;
};

}  // namespace onnx_tv::solver
