#pragma once
// Validation of one node by its schema, before any kernel or dimension rule reads it: input and
// output counts and attribute kinds as ONNX's own schema gives them, then what its dimension
// rule family needs (ranks, axes in range, sizes that fit, types that agree). Both the executor
// (ops::run_node) and shape reduction (reduce/rules.cpp) call it with the inputs at full size,
// so the default path and --no-reduce accept and reject the same nodes, and kernels and rules
// may assume a valid node.
#include <span>
#include <vector>

#include "ops/schema.h"

namespace onnx_tv::ops {

// The outputs of `node` (one per output the node names) from its inputs (nullptr: omitted), or
// InputError naming the input, attribute and what was expected; the caller adds the node and
// the file. Sizes are checked to fit int64 with the element count of every output.
std::vector<OutputInfo> infer_shapes(const OpSchema& schema, const ir::Node& node,
                                     std::span<const InputInfo* const> inputs);

// Input and output counts, required attributes and attribute kinds by ONNX's own schema of the
// op at the node's opset, when the ONNX library knows the revision onnx-tv models
// (`since_version`); ops outside ONNX's domains are left to their shape function.
// The inputs' element types are checked against its type constraints too.
void check_onnx_schema(const ir::Node& node, int since_version,
                       std::span<const InputInfo* const> inputs);

// Einsum's equation against its operands' shapes: the labels of each operand's dimensions, then
// the output's labels (summed labels are those not in the output). InputError as validation.
std::vector<std::vector<int>> einsum_labels(const std::string& equation,
                                            std::span<const ir::Shape> shapes);

}  // namespace onnx_tv::ops
