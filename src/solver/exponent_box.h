#pragma once
// Bounds on the monomials of a value with some definitions unfolded, without unfolding them:
// for every atom, the least and greatest exponent it has in any term. Unfolding def(p)^e gives
// terms whose exponents are sums of e terms of p, so each lies in e times p's bounds; a sum's
// terms lie in the hull of its terms' bounds. Values whose bounds leave no exponent common to
// all of them, for some atom, share no monomial in the unfolded form: the cheap half of judging
// a count in the form a comparison proved equal in (check/proof_form.h).
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "solver/context.h"
#include "solver/small_rational.h"

namespace onnx_tv::solver {

struct ExponentBound {
  AtomId atom;
  SmallRational lo, hi;
};
// Sorted by atom; an atom left out has exponent 0 in every term.
using ExponentBox = std::vector<ExponentBound>;

class ExponentBoxes {
 public:
  ExponentBoxes(const Context& ctx, const std::set<AtomId>& unfolded)
      : ctx_(ctx), unfolded_(unfolded) {}
  // The bounds of v with the definitions in `unfolded` replaced by their bodies; nullopt where
  // an unfolded definition occurs to a negative power, or the bounds grow past max_atoms.
  std::optional<ExponentBox> of(Value v, size_t max_atoms = 4096);
  // The bounds of the products of a term of a value bounded by a and a term of one bounded by
  // b: where the product rewrites no monomial (Context::regular_product), its terms are among
  // those, so this bounds it without building it.
  static ExponentBox of_products(const ExponentBox& a, const ExponentBox& b);
  // Whether no monomial can lie within every box (some atom's ranges have no common point).
  static bool disjoint(std::span<const ExponentBox> boxes);

 private:
  std::optional<ExponentBox> poly(PolyId p, size_t max_atoms);
  const Context& ctx_;
  const std::set<AtomId>& unfolded_;
  std::unordered_map<PolyId, std::optional<ExponentBox>> memo_;
};

}  // namespace onnx_tv::solver
