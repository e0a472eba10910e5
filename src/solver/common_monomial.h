#pragma once
// Whether values share a monomial: the test behind every guard that a sum over pieces counts
// them (a term every rank, micro-batch or position holds is multiplied by their number).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "solver/context.h"

namespace onnx_tv::solver {

// True when one monomial (coefficients left out) occurs in every value; infinities share none.
bool share_a_monomial(const Context& ctx, std::span<const Value> values);

// True when one term, monomial and coefficient, occurs in every value: a part they all hold
// the same, which a sum over them counts. Values that only share monomials with different
// coefficients do not (a softmax over two positions is written p and 1 - p).
bool share_a_term(const Context& ctx, std::span<const Value> values);

// The terms (or, without coefficients, the monomials) common to every value added so far, for
// tests that stop as soon as none is left.
class CommonTerms {
 public:
  CommonTerms(const Context& ctx, bool with_coefficients)
      : ctx_(ctx), with_coefficients_(with_coefficients) {}
  // Adds a value; whether some term is still common to every value added.
  bool add(Value v);

 private:
  // (monomial id, coefficient or null)
  using Term = std::pair<uint32_t, const SmallRational*>;
  static bool by_monomial(const Term& a, const Term& b) { return a.first < b.first; }
  const Context& ctx_;
  bool with_coefficients_;
  bool first_ = true;
  std::vector<Term> common_;
};

}  // namespace onnx_tv::solver
