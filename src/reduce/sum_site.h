#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace onnx_tv::reduce {

// A sum (or softmax, which sums exponentials) along an axis the instance shrinks, of data the inference found to hold no
// part that is the same along it (reduce/uniform_parts.cpp). Terms can cancel, which that
// inference does not see (softmax(x - x) is 1/n): the check confirms on the instance's values
// that no such part is there, else keeps the axis whole in the next instance it builds.
struct SumSite {
  int64_t rank = -1;   // -1: the spec; else the instance's rank
  std::string output;  // the node's first output (rewriting moves nodes, never renames these)
  size_t input = 0;    // the data operand
  size_t axis = 0;     // along which it is summed
  int64_t full = 0;    // the axis's full extent
  // A contraction: the other factor and its axis; the addends are the factors' products.
  int64_t other = -1;
  size_t other_axis = 0;
};

// A ReduceMean is rewritten (reduce/rewrite.cpp) as a ReduceSum writing its output with this
// suffix and a division by the full count writing the output itself: the sum is the site.
inline constexpr const char* kMeanSumSuffix = "/onnx_tv.sum";

// Names a sum site across instances (the instance's ranks and values differ; a program's file,
// a node's first output, the operand and the axis do not): the key of `keep` (check.cpp) under
// which the inference keeps that axis whole.
inline std::string counted_sum_key(const std::string& file, const std::string& output,
                                   size_t input, size_t axis) {
  return "(counted sum) " + file + " | " + output + " | " + std::to_string(input) + " | " +
         std::to_string(axis);
}

}  // namespace onnx_tv::reduce
