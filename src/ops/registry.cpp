#include "ops/registry.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "ops/kernel_util.h"

namespace onnx_tv::ops {

namespace {

// ONNX spells the default domain both "" and "ai.onnx".
std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

struct Table {
  std::vector<OpDef> defs;
  // (domain, op_type) -> defs sorted by since_version.
  std::map<std::pair<std::string, std::string>, std::vector<const OpDef*>> by_name;

  Table() {
    detail::add_elementwise_ops(defs);
    detail::add_matmul_ops(defs);
    detail::add_reduce_ops(defs);
    detail::add_shape_ops(defs);
    detail::add_constant_ops(defs);
    detail::add_nn_ops(defs);
    detail::add_logic_ops(defs);
    for (const OpDef& d : defs) by_name[{canonical_domain(d.domain), d.op_type}].push_back(&d);
    for (auto& [key, v] : by_name) {
      std::sort(v.begin(), v.end(), [](const OpDef* a, const OpDef* b) {
        return a->since_version < b->since_version;
      });
    }
  }
};

const Table& table() {
  static const Table t;  // built once; thread-safe initialization
  return t;
}

}  // namespace

const OpDef* find_op(const std::string& domain, const std::string& op_type, int opset) {
  const Table& t = table();
  auto it = t.by_name.find({canonical_domain(domain), op_type});
  if (it == t.by_name.end()) return nullptr;
  const OpDef* best = nullptr;
  for (const OpDef* d : it->second) {
    if (d->since_version <= opset) best = d;
  }
  return best;
}

std::vector<ir::Tensor> run_node(solver::Context& ctx, const ir::Node& node, size_t node_index,
                                 std::span<const ir::Tensor* const> inputs) {
  const OpDef* def = find_op(node.domain, node.op_type, node.opset);
  if (!def) {
    std::string domain = node.domain.empty() ? "ai.onnx" : node.domain;
    throw Unsupported("op '" + node.op_type + "' (domain '" + domain + "', opset " +
                      std::to_string(node.opset) + ") is not supported, at " +
                      node.describe(node_index));
  }
  try {
    KernelArgs args{ctx, node, inputs};
    std::vector<ir::Tensor> out = def->kernel(args);
    // A node may omit trailing outputs, never ask for more than the op has.
    if (node.outputs.size() > out.size()) {
      throw InputError("has " + std::to_string(node.outputs.size()) + " outputs, but " +
                       node.op_type + " produces " + std::to_string(out.size()));
    }
    return out;
  } catch (Error& e) {
    e.add_context(node.describe(node_index));
    throw;
  }
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> out;
  for (const OpDef& d : table().defs) out.push_back(&d);
  return out;
}

}  // namespace onnx_tv::ops
