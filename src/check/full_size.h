#pragma once
// A refutation found on a reduced instance is reported in the instance's coordinates; this adds
// the full-size positions they stand for where the reduction says (reduce::full_position):
// the refuted element of the spec output and each witness input element.
#include "check/result.h"

namespace onnx_tv::check {

// Sets m.full_element and each witness entry's full_symbol that the reduction's factors
// determine; leaves the others unset. Does nothing unless reduction was applied.
void name_at_full_size(Mismatch& m, const Reduction& red);

}  // namespace onnx_tv::check
