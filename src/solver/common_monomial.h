#pragma once
// Whether values share a monomial: the test behind every guard that a sum over pieces counts
// them (a term every rank, micro-batch or position holds is multiplied by their number).
#include <span>

#include "solver/context.h"

namespace onnx_tv::solver {

// True when one monomial (coefficients left out) occurs in every value; infinities share none.
bool share_a_monomial(const Context& ctx, std::span<const Value> values);

// True when one term, monomial and coefficient, occurs in every value: a part they all hold
// the same, which a sum over them counts. Values that only share monomials with different
// coefficients do not (a softmax over two positions is written p and 1 - p).
bool share_a_term(const Context& ctx, std::span<const Value> values);

}  // namespace onnx_tv::solver
