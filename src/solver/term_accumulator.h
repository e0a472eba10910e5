#pragma once
// Sums coefficients per monomial for products, dot products and n-ary sums. Terms sit in one
// vector with an open-addressing index by monomial beside it, so adding a term is one probe
// and, once the vectors have grown, no allocation.
#include <algorithm>
#include <iterator>
#include <vector>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

class TermAccumulator {
 public:
  // `expected` is an upper bound on distinct monomials; it only sizes the first allocation.
  explicit TermAccumulator(size_t expected) {
    terms_.reserve(std::min<size_t>(expected, kInitialCap));
    resize_index(std::min<size_t>(expected, kInitialCap) * 2);
  }

  void add(MonoId m, SmallRational&& c) {
    size_t i = slot(m);
    for (;; i = (i + 1) & mask_) {
      uint32_t k = index_[i];
      if (k == kEmpty) break;
      if (terms_[k].first == m) {
        terms_[k].second += c;
        return;
      }
    }
    index_[i] = uint32_t(terms_.size());
    terms_.emplace_back(m, std::move(c));
    if (terms_.size() * 2 > index_.size()) resize_index(index_.size() * 2);
  }
  void add(MonoId m, const SmallRational& c) { add(m, SmallRational(c)); }

  // The nonzero terms, sorted by monomial, in a vector of exactly their size: the result is
  // stored as a polynomial, and the accumulator's spare capacity would stay with it.
  std::vector<Term> drain() {
    std::erase_if(terms_, [](const Term& t) { return t.second.sign() == 0; });
    std::sort(terms_.begin(), terms_.end(), [](const Term& a, const Term& b) { return a.first < b.first; });
    if (terms_.capacity() == terms_.size()) return std::move(terms_);
    return std::vector<Term>(std::make_move_iterator(terms_.begin()), std::make_move_iterator(terms_.end()));
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  static constexpr size_t kInitialCap = size_t(1) << 14;

  size_t slot(MonoId m) const { return size_t((uint64_t(m) * 0x9e3779b97f4a7c15ULL) >> shift_); }

  void resize_index(size_t want) {
    size_t n = 16;
    int bits = 4;
    while (n < want) n <<= 1, ++bits;
    index_.assign(n, kEmpty);
    mask_ = n - 1;
    shift_ = 64 - bits;
    for (size_t k = 0; k < terms_.size(); ++k) {
      size_t i = slot(terms_[k].first);
      while (index_[i] != kEmpty) i = (i + 1) & mask_;
      index_[i] = uint32_t(k);
    }
  }

  std::vector<Term> terms_;
  std::vector<uint32_t> index_;
  size_t mask_ = 0;
  int shift_ = 60;
};

}  // namespace onnx_tv::solver
