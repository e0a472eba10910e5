#pragma once
// Which integer inputs of the spec are modeled by their indicators (solver/indicators.cpp), and
// over which range. plan-format section 1 (integer inputs): a bool input ranges over {0, 1};
// an integer input that indexes a Gather, directly or through ops that only move or reshape it
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Cast to an integer type), ranges over
// [0, size of the gathered axis), the indices for which the Gather is defined without the
// negative (from the end) form; where it indexes several, over the smallest. Other integer
// inputs stay symbols, on which comparisons are UNKNOWN.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "ir/graph.h"

namespace onnx_tv::check {

std::map<std::string, std::pair<int64_t, int64_t>> integer_input_ranges(const ir::Graph& spec);

}  // namespace onnx_tv::check
