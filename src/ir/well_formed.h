#pragma once
// What ONNX requires of a graph before any op is read: every value a node reads is defined
// earlier (a graph input, an initializer or an earlier node's output), no value is defined
// twice, and every graph output is defined. Checked once after loading, so later phases may
// look values up without guarding.
#include "ir/graph.h"

namespace onnx_tv::ir {

// InputError naming the file, the node and the value.
void check_well_formed(const Graph& g);

}  // namespace onnx_tv::ir
