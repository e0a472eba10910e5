#pragma once
// The op table: every op's schema (ops/schema.h) keyed by (domain, op type, since-version), as
// ONNX's own defs are. The same kernels serve the prover (symbolic inputs) and `onnx-tv eval`
// (constant inputs), so the conformance tests exercise the code that proves.
#include <span>
#include <string>
#include <vector>

#include "ops/schema.h"

namespace onnx_tv::ops {

// The schema for `op_type` in `domain` at the model's `opset` for that domain: the one with the
// largest since_version <= opset. nullptr when onnx-tv does not model it.
const OpSchema* find_op(const std::string& domain, const std::string& op_type, int opset);
// The schema of a node, or nullptr.
const OpSchema* schema_of(const ir::Node& node);

// Validates one node (ops/infer_shapes.h) and runs its kernel. Throws Unsupported naming op,
// domain, opset and node when no kernel exists, or when its outputs would hold more than
// `max_elements` elements (0: no limit), before anything is allocated; every error names the
// node.
std::vector<ir::Tensor> run_node(solver::Context& ctx, const ir::Node& node, size_t node_index,
                                 std::span<const ir::Tensor* const> inputs,
                                 int64_t max_elements = 0);

// All registered schemas, for docs, the conformance table and the registry's own tests.
std::vector<const OpSchema*> all_ops();

}  // namespace onnx_tv::ops
