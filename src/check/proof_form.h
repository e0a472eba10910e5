#pragma once
// The representation in which a run proved forms equal, and in which a count of addends must
// therefore be judged. A sum over pieces (positions of a shrunk axis, ranks, micro-batches)
// counts them where its addends hold a common term; the lifting argument that carries the
// instance's verdict to the full size treats every atom of the forms it compared as a free
// variable (docs/shape-reduction.md). Definitions hide terms: def(1 - x_k)^2 holds no term in
// common over k, its body does (the 1). So where a comparison unfolded definitions, the
// addends are judged with the same definitions unfolded; where it expanded every one (a
// whole-program run), expanded. Unfolding is a ring homomorphism, so forms a comparison proved
// equal are also equal with the union of every comparison's unfolded definitions replaced.
#include <optional>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>

#include "common/limits.h"
#include "solver/context.h"
#include "solver/exponent_box.h"

namespace onnx_tv::check {

struct ProofForm {
  bool expanded = false;                // some comparison expanded every definition
  std::set<solver::AtomId> unfolded;    // definitions some comparison replaced by their bodies
  bool cases = false;                   // some comparison was decided by case analysis

  bool is_built_form() const { return !expanded && unfolded.empty() && !cases; }
  // v in this representation; nullopt past max_terms (the caller then takes the sum to count,
  // which only keeps an axis or the ranks whole).
  std::optional<solver::Value> of(solver::Context& ctx, solver::Value v, size_t max_terms) const {
    if (!v.is_finite() || is_built_form()) return v;
    if (cases && ctx.has_extreme(v)) return std::nullopt;
    if (auto it = memo_.find(v.poly); it != memo_.end()) return it->second;
    std::optional<solver::Value> x = v;
    if (expanded) x = ctx.expand_definitions(v, max_terms);
    else if (!unfolded.empty()) x = ctx.unfold(v, unfolded, max_terms);
    memo_.emplace(v.poly, x);
    return x;
  }
  // False when the values, in this representation, can share no monomial: shown by bounds on
  // their exponents (solver/exponent_box.h) without unfolding them. True decides nothing.
  bool bounds_apply() const { return !expanded && !unfolded.empty(); }
  bool may_share(const solver::Context& ctx, std::span<const solver::Value> vs) const {
    if (!bounds_apply()) return true;
    if (!boxes_) boxes_ = std::make_unique<solver::ExponentBoxes>(ctx, unfolded);
    std::vector<solver::ExponentBox> bs;
    for (solver::Value v : vs) {
      std::optional<solver::ExponentBox> b = boxes_->of(v);
      if (!b) return true;
      bs.push_back(std::move(*b));
    }
    return !solver::ExponentBoxes::disjoint(bs);
  }
  // may_share for the products a[k] * b[k], bounded from their factors without building them
  // (true where a product rewrites a monomial). Spends `budget` (products of terms examined);
  // nullopt past it.
  std::optional<bool> products_may_share(solver::Context& ctx, std::span<const solver::Value> a,
                                         std::span<const solver::Value> b, size_t& budget) const {
    if (!bounds_apply()) return true;
    if (!boxes_) boxes_ = std::make_unique<solver::ExponentBoxes>(ctx, unfolded);
    std::vector<solver::ExponentBox> bs;
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
      const auto [x, y] = ctx.mul_factors(a[k], b[k]);
      const std::optional<bool> regular = ctx.regular_product(x, y, budget);
      if (!regular) return std::nullopt;
      if (!*regular) return true;
      std::optional<solver::ExponentBox> bx = boxes_->of(x), by = boxes_->of(y);
      if (!bx || !by) return true;
      bs.push_back(solver::ExponentBoxes::of_products(*bx, *by));
    }
    return !solver::ExponentBoxes::disjoint(bs);
  }

 private:
  // Forms already rebuilt (the same addend recurs across slices and sites), and the bounds.
  mutable std::unordered_map<solver::PolyId, std::optional<solver::Value>> memo_;
  mutable std::unique_ptr<solver::ExponentBoxes> boxes_;
};

}  // namespace onnx_tv::check
