#include "solver/exponent_box.h"

#include <algorithm>

namespace onnx_tv::solver {

namespace {

// a + k * b, pointwise (an atom left out is [0, 0]); k > 0.
ExponentBox add_scaled(const ExponentBox& a, const ExponentBox& b, const SmallRational& k) {
  ExponentBox out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].atom < b[j].atom)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].atom < a[i].atom) {
      out.push_back({b[j].atom, b[j].lo * k, b[j].hi * k});
      ++j;
    } else {
      out.push_back({a[i].atom, a[i].lo + b[j].lo * k, a[i].hi + b[j].hi * k});
      ++i, ++j;
    }
  }
  return out;
}

// The hull of a and b (an atom left out is [0, 0]).
ExponentBox hull(const ExponentBox& a, const ExponentBox& b) {
  ExponentBox out;
  out.reserve(a.size() + b.size());
  const SmallRational zero;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].atom < b[j].atom)) {
      out.push_back({a[i].atom, std::min(a[i].lo, zero), std::max(a[i].hi, zero)});
      ++i;
    } else if (i == a.size() || b[j].atom < a[i].atom) {
      out.push_back({b[j].atom, std::min(b[j].lo, zero), std::max(b[j].hi, zero)});
      ++j;
    } else {
      out.push_back({a[i].atom, std::min(a[i].lo, b[j].lo), std::max(a[i].hi, b[j].hi)});
      ++i, ++j;
    }
  }
  return out;
}

}  // namespace

std::optional<ExponentBox> ExponentBoxes::of(Value v, size_t max_atoms) {
  if (!v.is_finite()) return ExponentBox{};
  return poly(v.poly, max_atoms);
}

std::optional<ExponentBox> ExponentBoxes::poly(PolyId p, size_t max_atoms) {
  if (auto it = memo_.find(p); it != memo_.end()) return it->second;
  std::optional<ExponentBox> out;
  bool failed = false;
  for (size_t i = 0, n = ctx_.poly_term_count(p); i < n && !failed; ++i) {
    const TermView t = ctx_.term(p, i);
    ExponentBox term;
    for (const auto& [atom, e] : t.factors) {
      const AtomView av = ctx_.atom(atom);
      if (av.fn == Fn::Def && unfolded_.count(atom)) {
        if (e <= SmallRational(0) || !e.is_integer()) {  // unfold() refuses these too
          failed = true;
          break;
        }
        // The body's bounds, before the view is used again (poly() may add to the memo only).
        const PolyId body = av.args[0];
        std::optional<ExponentBox> b = poly(body, max_atoms);
        if (!b) {
          failed = true;
          break;
        }
        term = add_scaled(term, *b, e);
      } else {
        term = add_scaled(term, ExponentBox{{atom, e, e}}, SmallRational(1));
      }
    }
    if (failed) break;
    out = out ? hull(*out, term) : term;
    if (out->size() > max_atoms) failed = true;
  }
  if (failed) out.reset();
  else if (!out) out = ExponentBox{};  // zero: no terms
  memo_[p] = out;
  return out;
}

ExponentBox ExponentBoxes::of_products(const ExponentBox& a, const ExponentBox& b) {
  return add_scaled(a, b, SmallRational(1));
}

bool ExponentBoxes::disjoint(std::span<const ExponentBox> boxes) {
  if (boxes.size() < 2) return false;
  // Every atom any box names; the others are [0, 0] everywhere.
  std::set<AtomId> atoms;
  for (const ExponentBox& b : boxes)
    for (const ExponentBound& e : b) atoms.insert(e.atom);
  for (AtomId a : atoms) {
    SmallRational lo, hi;
    bool first = true;
    for (const ExponentBox& b : boxes) {
      auto it = std::lower_bound(b.begin(), b.end(), a,
                                 [](const ExponentBound& x, AtomId y) { return x.atom < y; });
      const bool named = it != b.end() && it->atom == a;
      const SmallRational l = named ? it->lo : SmallRational(0), h = named ? it->hi : SmallRational(0);
      if (first) lo = l, hi = h, first = false;
      else lo = std::max(lo, l), hi = std::min(hi, h);
      if (hi < lo) return true;
    }
  }
  return false;
}

}  // namespace onnx_tv::solver
