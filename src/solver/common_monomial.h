#pragma once
// Whether values share a monomial: the test behind every guard that a sum over pieces counts
// them (a term every rank, micro-batch or position holds is multiplied by their number).
#include <span>

#include "solver/context.h"

namespace onnx_tv::solver {

// True when one monomial (coefficients left out) occurs in every value; infinities share none.
bool share_a_monomial(const Context& ctx, std::span<const Value> values);

}  // namespace onnx_tv::solver
