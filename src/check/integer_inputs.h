#pragma once
// Which integer inputs of the spec are modeled by their indicators (solver/indicators.cpp), and
// over which range. plan-format section 1 (integer inputs): a bool input ranges over {0, 1};
// an integer input that indexes a Gather the spec's outputs depend on, directly or through ops
// that only move or reshape it (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Cast to an
// integer type), ranges over [0, size of the gathered axis), the indices for which the Gather
// is defined without the negative (from the end) form; where it indexes several, over the
// smallest. Other integer inputs stay symbols, on which comparisons are UNKNOWN. Graph inputs
// and initializers are both covered: a bound initializer is an input (plan-format section 3).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::check {

struct IntegerRange {
  int64_t lo = 0, hi = 0;  // [lo, hi)
  std::string why;         // "it indexes Gather node '/embed/Gather'"
};

std::map<std::string, IntegerRange> integer_input_ranges(const ir::Graph& spec);

// What the report says of each range a check assumed (a warning line each).
std::string range_note(const std::string& name, const IntegerRange& r, const ir::Graph& spec);

// Adds to `warnings`, once each, the notes of the ranges of the inputs a run made symbolic
// (those in `symbolic`, the spec's starting values).
template <typename Values>
void note_ranges(std::vector<std::string>& warnings, const ir::Graph& spec, const Values& symbolic) {
  for (const auto& [name, range] : integer_input_ranges(spec)) {
    const std::string note = range_note(name, range, spec);
    if (symbolic.count(name) > 0 &&
        std::find(warnings.begin(), warnings.end(), note) == warnings.end())
      warnings.push_back(note);
  }
}

}  // namespace onnx_tv::check
