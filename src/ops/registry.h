#pragma once
// Operator semantics keyed by (domain, op type, since-version), as ONNX's own defs are: a
// kernel maps input tensors of symbolic elements to output tensors. The same kernels serve the
// prover (symbolic inputs) and `onnx-tv eval` (constant inputs), so the conformance tests
// exercise the code that proves.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "solver/context.h"

namespace onnx_tv::ops {

// What a kernel sees. Omitted optional inputs are nullptr. Kernels report a malformed node or
// value with InputError, an op or case they do not model with Unsupported, and let MathError
// through; the caller adds the node and file to the message.
struct KernelArgs {
  solver::Context& ctx;
  const ir::Node& node;
  std::span<const ir::Tensor* const> inputs;
};

using Kernel = std::function<std::vector<ir::Tensor>(KernelArgs&)>;

struct OpDef {
  std::string domain;  // "" for the default domain
  std::string op_type;
  int since_version;
  Kernel kernel;
};

// The kernel for `op_type` in `domain` at the model's `opset` for that domain: the def with the
// largest since_version <= opset. nullptr when onnx-tv does not model it.
const OpDef* find_op(const std::string& domain, const std::string& op_type, int opset);

// Runs one node. Throws Unsupported naming op, domain, opset and node when no kernel exists.
std::vector<ir::Tensor> run_node(solver::Context& ctx, const ir::Node& node, size_t node_index,
                                 std::span<const ir::Tensor* const> inputs);

// All registered (domain, op_type, since_version), for docs and the conformance table.
std::vector<const OpDef*> all_ops();

}  // namespace onnx_tv::ops
