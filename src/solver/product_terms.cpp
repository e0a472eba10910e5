// Products as mul builds them, examined without storing them. A contraction over an axis that
// shape reduction shrinks counts its positions where the products a[k] * b[k] hold a term in
// common; deep in a large plan those products are many and each up to kDefineAbove^2 terms, so
// storing them (as mul would) costs more memory than the rest of the run. Here the first
// product is built in a local table and the others only where they meet its terms.
#include <unordered_map>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

namespace {

using Key = std::vector<Factor>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0x30a0;
    for (const auto& [a, e] : k) h = hash_combine(hash_combine(h, a), e.hash());
    return size_t(h);
  }
};

}  // namespace

std::pair<Value, Value> Context::mul_factors(Value a, Value b) {
  Impl& I = *impl_;
  if (!a.is_finite() || !b.is_finite()) return {a, b};
  if (I.defining && !is_constant(a) && !is_constant(b)) {
    if (I.defines(I.polys[a.poly].terms.size())) a = I.define(a);
    if (I.defines(I.polys[b.poly].terms.size())) b = I.define(b);
  }
  return {a, b};
}

std::optional<bool> Context::regular_product(Value a, Value b, size_t& budget) const {
  const Impl& I = *impl_;
  if (!a.is_finite() || !b.is_finite()) return false;
  const auto& A = I.polys[a.poly].terms;
  const auto& B = I.polys[b.poly].terms;
  if (A.size() * B.size() > budget) return std::nullopt;
  budget -= A.size() * B.size();
  Key k;
  for (const auto& ta : A)
    for (const auto& tb : B) {
      merge_factors(I.monos[ta.first].factors, I.monos[tb.first].factors, k);
      for (const auto& [atom, e] : k)
        if (I.irregular_factor(atom, e)) return false;
      if (I.reducible_inv(k, nullptr) != InternTable::kNone || I.exclusive_indicators(k))
        return false;
    }
  return true;
}

std::optional<bool> Context::products_share_a_term(std::span<const Value> a,
                                                   std::span<const Value> b, size_t& budget) {
  if (a.size() != b.size()) throw InternalError("products_share_a_term: spans of different lengths");
  Impl& I = *impl_;
  // Terms of the first product still common to all products seen: its coefficient, and the
  // current product's.
  std::unordered_map<Key, std::pair<SmallRational, SmallRational>, KeyHash> common;
  Key k;
  for (size_t at = 0; at < a.size(); ++at) {
    const bool first = at == 0;
    auto [x, y] = mul_factors(a[at], b[at]);
    // Where the product rewrites a monomial (or is infinite), it is built as mul builds it.
    Value built{};
    bool as_built = false;
    if (std::optional<bool> r = regular_product(x, y, budget); !r) {
      return std::nullopt;
    } else if (!*r) {
      built = mul(a[at], b[at]);
      if (!built.is_finite()) return false;  // infinities hold no term
      if (I.polys[built.poly].terms.size() > budget) return std::nullopt;
      budget -= I.polys[built.poly].terms.size();
      as_built = true;
    }
    auto add = [&](const Key& factors, const SmallRational& c) {
      if (first) {
        common[factors].first += c;
      } else if (auto it = common.find(factors); it != common.end()) {
        it->second.second += c;
      }
    };
    if (as_built) {
      for (const auto& [m, c] : I.polys[built.poly].terms) add(I.monos[m].factors, c);
    } else {
      for (const auto& ta : I.polys[x.poly].terms)
        for (const auto& tb : I.polys[y.poly].terms) {
          merge_factors(I.monos[ta.first].factors, I.monos[tb.first].factors, k);
          add(k, ta.second * tb.second);
        }
    }
    // Keep the terms this product holds with the first product's coefficient.
    for (auto it = common.begin(); it != common.end();) {
      auto& [c0, c] = it->second;
      const bool keep = first ? c0.sign() != 0 : c == c0;
      if (keep) {
        c = SmallRational(0);
        ++it;
      } else {
        it = common.erase(it);
      }
    }
    if (common.empty()) return false;
  }
  return !a.empty();
}

}  // namespace onnx_tv::solver
