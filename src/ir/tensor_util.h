#pragma once
// Region and layout helpers on tensors, shared by bindings, collectives and reports.
#include <vector>

#include "ir/tensor.h"

namespace onnx_tv::ir {

// The sub-tensor [start, end) (one bound per dimension). Bounds must be within the shape.
Tensor slice(const Tensor& t, const std::vector<int64_t>& start, const std::vector<int64_t>& end);

// Writes `part` into `whole` at offset `start` (shapes must fit).
void paste(Tensor& whole, const Tensor& part, const std::vector<int64_t>& start);

// Concatenation along `axis` (non-negative); all other dimensions equal.
Tensor concat(const std::vector<const Tensor*>& parts, int64_t axis);

// Splits into n equal chunks along `axis`; the size must be divisible by n.
std::vector<Tensor> split_equal(const Tensor& t, int64_t axis, int64_t n);

// Multi-index of a flat row-major offset.
std::vector<int64_t> unravel(int64_t offset, const Shape& shape);

// "[0, 3]"-style index text for messages and symbol names.
std::string index_string(const std::vector<int64_t>& index);

}  // namespace onnx_tv::ir
