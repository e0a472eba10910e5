#pragma once
// The shapes a collective gives its members, from the shapes they contribute: the one check
// of a collective's shapes, made by the executor before it moves any data and by shape
// reduction at full size before it ties any dimension, so that both modes accept and reject
// the same plans (as ops::infer_shapes is for ONNX nodes).
#include <vector>

#include "ir/comm.h"
#include "ir/tensor.h"

namespace onnx_tv::exec {

// Output shape of each member, in group order; throws InputError naming what does not fit
// (ranks, shapes off the concatenated axis, an axis out of range, a dimension that does not
// split into the group's count). `ins` are the members' input shapes in group order.
std::vector<ir::Shape> comm_output_shapes(const ir::CommOp& op, const std::vector<ir::Shape>& ins);

}  // namespace onnx_tv::exec
