#pragma once
// Private to src/ops: the shape functions of each dimension rule family (infer_math.cpp,
// infer_layout.cpp) and what they share. Kernels call the same helpers (reshape_target,
// split_sizes, slice_ranges, ...) so a node's shape is computed by one piece of code.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/schema.h"

namespace onnx_tv::ops::detail {

struct ShapeArgs {
  const OpSchema& schema;
  const ir::Node& node;
  std::span<const InputInfo* const> inputs;
};

using Outputs = std::vector<OutputInfo>;

// "input #1 ('B')".
std::string input_label(const ir::Node& n, size_t i);
// Input i; InputError naming it when omitted.
const InputInfo& need(const ShapeArgs& a, size_t i);
// Input i or nullptr.
const InputInfo* maybe(const ShapeArgs& a, size_t i);
// The integer values of input i when known; InputError when they are known and `scalar` but
// there is not exactly one.
const std::vector<int64_t>* ints_of(const ShapeArgs& a, size_t i);
// InputError when the node carries attribute `name` although its revision takes it as input
// #i (Reduce*, Squeeze, Unsqueeze "axes" at the opsets that made it an input): read as the
// attribute by one reader and ignored by another, it would mean two things.
void reject_attribute_taken_as_input(const ShapeArgs& a, size_t i, const char* name);
// InputError unless input i has rank in [lo, hi].
void expect_rank(const ShapeArgs& a, size_t i, int64_t lo, int64_t hi);
// InputError unless inputs i and j have the same type (Undefined matches any).
ir::DType same_dtype(const ShapeArgs& a, size_t i, size_t j);
Outputs one(std::optional<ir::Shape> s, ir::DType t);

Outputs infer_broadcast(const ShapeArgs& a);
Outputs infer_same_shape(const ShapeArgs& a);
Outputs infer_matmul(const ShapeArgs& a);
Outputs infer_gemm(const ShapeArgs& a);
Outputs infer_einsum(const ShapeArgs& a);
Outputs infer_reduce(const ShapeArgs& a);
Outputs infer_layer_norm(const ShapeArgs& a);

Outputs infer_transpose(const ShapeArgs& a);
Outputs infer_reshape(const ShapeArgs& a);
Outputs infer_flatten(const ShapeArgs& a);
Outputs infer_squeeze(const ShapeArgs& a);
Outputs infer_unsqueeze(const ShapeArgs& a);
Outputs infer_concat(const ShapeArgs& a);
Outputs infer_split(const ShapeArgs& a);
Outputs infer_slice(const ShapeArgs& a);
Outputs infer_expand(const ShapeArgs& a);
Outputs infer_tile(const ShapeArgs& a);
Outputs infer_constant_of_shape(const ShapeArgs& a);

Outputs infer_gather_elements(const ShapeArgs& a);
Outputs infer_gather_nd(const ShapeArgs& a);
Outputs infer_scatter_elements(const ShapeArgs& a);
Outputs infer_scatter_nd(const ShapeArgs& a);
Outputs infer_one_hot(const ShapeArgs& a);
Outputs infer_top_k(const ShapeArgs& a);
Outputs infer_arg_reduce(const ShapeArgs& a);
Outputs infer_range(const ShapeArgs& a);
Outputs infer_trilu(const ShapeArgs& a);
Outputs infer_gather(const ShapeArgs& a);
Outputs infer_shape(const ShapeArgs& a);
Outputs infer_size(const ShapeArgs& a);
Outputs infer_constant(const ShapeArgs& a);

// ---- shared with the kernels ----

// Before opset 7, B broadcast to A only when the `broadcast` attribute is 1, with B's dims
// aligned at `axis` (default: the trailing dims); otherwise the shapes had to be equal. The
// result is B's shape padded with 1s to A's rank, so numpy broadcasting then means the same.
ir::Shape legacy_rhs_shape(const ir::Node& n, const ir::Shape& xs, const ir::Shape& ys);

// The output shape of Reshape of `in` to `target`; InputError naming what does not fit.
ir::Shape reshape_target(const ir::Shape& in, std::vector<int64_t> target, bool allowzero);
// Split sizes along an axis of size `dim`: given (`sizes`), or `outputs` near-equal chunks (the
// last smaller only when `uneven`, num_outputs of Split-18).
std::vector<int64_t> split_sizes(int64_t dim, std::optional<std::vector<int64_t>> sizes,
                                 int64_t outputs, bool uneven, size_t node_outputs);
// One sliced axis: its first index, step and output size.
struct SliceAxis {
  int64_t axis, first, step, size;
};
std::vector<SliceAxis> slice_ranges(const ir::Shape& in, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                    const std::vector<int64_t>& steps);
// The dimensions Squeeze keeps (axes nullopt: every dimension of size 1 goes).
ir::Shape squeezed(const ir::Shape& in, const std::optional<std::vector<int64_t>>& axes);
ir::Shape unsqueezed(const ir::Shape& in, const std::vector<int64_t>& axes);
// Reduce axes, normalized; nullopt: the node leaves the input as it is (noop_with_empty_axes).
std::optional<std::vector<int64_t>> reduce_axes_of(const ir::Node& n, int64_t rank,
                                                   const std::vector<int64_t>* axes_input,
                                                   bool axes_from_input);

// Einsum: labels are letters (ids 0..51) and the broadcast dimensions an ellipsis stands for
// (kEllipsisBase + j, j counted in the right-aligned ellipsis shape shared by all operands).
constexpr int kEllipsisBase = 52;
struct EinsumPlan {
  std::vector<std::vector<int>> dims_of;  // per operand: the label of each dimension
  std::vector<int> out_labels, sum_labels;
  std::map<int, int64_t> size;            // label -> size
  ir::Shape out_shape, sum_shape;
  int ellipsis_rank = 0;
};
// InputError naming what in the equation does not fit the operands' shapes.
EinsumPlan plan_einsum(const std::string& equation, std::span<const ir::Shape> shapes);

}  // namespace onnx_tv::ops::detail
