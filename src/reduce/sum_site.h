#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace onnx_tv::reduce {

// A sum (or softmax) along an axis the instance shrinks, of data the inference found to hold no
// part that is the same along it (reduce/uniform_parts.cpp). Terms can cancel, which that
// inference does not see (softmax(x - x) is 1/n): the check confirms on the instance's values
// that no such part is there, else proves at full size.
struct SumSite {
  int64_t rank = -1;   // -1: the spec; else the instance's rank
  std::string output;  // the node's first output (rewriting moves nodes, never renames these)
  size_t input = 0;    // the data operand
  size_t axis = 0;     // along which it is summed
  int64_t full = 0;    // the axis's full extent
  bool uniform_only = false;  // a softmax: counted only where every position is the same
};

}  // namespace onnx_tv::reduce
