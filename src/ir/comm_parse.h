#pragma once
// The communication ops of a plan's rank programs (plan-format section 5), read from their
// nodes into CommOps over concrete ranks.
#include <cstddef>
#include <cstdint>

#include "ir/comm.h"
#include "ir/graph.h"
#include "ir/plan.h"

namespace onnx_tv::ir {

// Whether a node is a communication op (onnx_tv domain, or com.microsoft's collectives and
// training Send/Recv).
bool is_comm_op(const Node& node);

// The communication op of `rank`'s node, resolved to concrete ranks (group_axes, peer_axis
// against the mesh; com.microsoft ops over the whole world). InputError naming file, node and
// attribute when malformed.
CommOp parse_comm_op(const Plan& plan, int64_t rank, size_t node_index);

}  // namespace onnx_tv::ir
