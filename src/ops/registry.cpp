#include "ops/registry.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "ops/infer_shapes.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops {

namespace {

// ONNX spells the default domain both "" and "ai.onnx".
std::string_view canonical_domain(std::string_view d) { return d == "ai.onnx" ? "" : d; }

struct Table {
  std::vector<OpSchema> defs;
  // op_type -> (domain, its defs sorted by since_version): looked up once per node and rank
  // (millions at scale) by the node's own op_type, with no key built.
  std::unordered_map<std::string, std::vector<std::pair<std::string, std::vector<const OpSchema*>>>>
      by_op;

  Table() {
    detail::add_elementwise_ops(defs);
    detail::add_matmul_ops(defs);
    detail::add_reduce_ops(defs);
    detail::add_shape_ops(defs);
    detail::add_constant_ops(defs);
    detail::add_nn_ops(defs);
    detail::add_logic_ops(defs);
    detail::add_index_ops(defs);
    detail::add_select_ops(defs);
    for (const OpSchema& d : defs) {
      auto& domains = by_op[d.op_type];
      const std::string_view dom = canonical_domain(d.domain);
      auto it = std::find_if(domains.begin(), domains.end(),
                             [&](const auto& e) { return e.first == dom; });
      if (it == domains.end()) it = domains.insert(domains.end(), {std::string(dom), {}});
      it->second.push_back(&d);
    }
    for (auto& [op, domains] : by_op)
      for (auto& [dom, v] : domains)
        std::sort(v.begin(), v.end(), [](const OpSchema* a, const OpSchema* b) {
          return a->since_version < b->since_version;
        });
  }
};

const Table& table() {
  static const Table t;  // built once; thread-safe initialization
  return t;
}

// What validation needs of the inputs: shapes and types, and the values of shape inputs when
// they are integer constants.
std::vector<InputInfo> input_info_values(solver::Context& ctx, const OpSchema& s,
                                         std::span<const ir::Tensor* const> inputs) {
  std::vector<InputInfo> out(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k]) continue;
    out[k].shape = inputs[k]->shape;
    out[k].dtype = inputs[k]->dtype;
    if (!s.is_shape_input(k)) continue;
    std::vector<int64_t> v;
    for (solver::Value x : inputs[k]->data) {
      auto r = x.is_finite() ? ctx.as_rational(x) : std::nullopt;
      auto i = r ? solver::as_int64(*r) : std::nullopt;
      if (!i) break;
      v.push_back(*i);
    }
    if (v.size() == inputs[k]->data.size()) out[k].ints = std::move(v);
  }
  return out;
}

struct InputInfos {
  std::vector<InputInfo> values;
  std::vector<const InputInfo*> ptrs;
  operator std::span<const InputInfo* const>() const { return ptrs; }
};

InputInfos input_infos(solver::Context& ctx, const OpSchema& s,
                       std::span<const ir::Tensor* const> inputs) {
  InputInfos r{input_info_values(ctx, s, inputs), {}};
  for (size_t k = 0; k < inputs.size(); ++k) r.ptrs.push_back(inputs[k] ? &r.values[k] : nullptr);
  return r;
}

}  // namespace

const OpSchema* find_op(const std::string& domain, const std::string& op_type, int opset) {
  const Table& t = table();
  auto it = t.by_op.find(op_type);
  if (it == t.by_op.end()) return nullptr;
  const std::string_view want = canonical_domain(domain);
  for (const auto& [dom, defs] : it->second) {
    if (dom != want) continue;
    const OpSchema* best = nullptr;
    for (const OpSchema* d : defs)
      if (d->since_version <= opset) best = d;
    return best;
  }
  return nullptr;
}

std::vector<ir::Tensor> run_node(solver::Context& ctx, const ir::Node& node, size_t node_index,
                                 std::span<const ir::Tensor* const> inputs, int64_t max_elements) {
  const OpSchema* def = find_op(node.domain, node.op_type, node.opset);
  if (!def) {
    std::string domain = node.domain.empty() ? "ai.onnx" : node.domain;
    throw Unsupported("op '" + node.op_type + "' (domain '" + domain + "', opset " +
                      std::to_string(node.opset) + ") is not supported, at " +
                      node.describe(node_index));
  }
  try {
    const std::vector<OutputInfo> want = infer_shapes(*def, node, input_infos(ctx, *def, inputs));
    if (max_elements > 0) {
      int64_t n = 0;  // each fits int64 (validation); their sum saturates
      for (const auto& o : want)
        if (o.shape) n = std::min<int64_t>(INT64_MAX / 2, n + ir::element_count(*o.shape));
      if (n > max_elements)
        throw ResourceLimit("its outputs would hold " + std::to_string(n) +
                          " elements, more than the limit of " + std::to_string(max_elements) +
                          " (--max-elements)");
    }
    KernelArgs args{ctx, node, inputs};
    std::vector<ir::Tensor> out = def->kernel(args);
    ONNX_TV_ASSERT(out.size() >= want.size(), node.op_type + " kernel gave " +
                   std::to_string(out.size()) + " outputs for " + std::to_string(want.size()));
    for (size_t k = 0; k < want.size(); ++k)
      ONNX_TV_ASSERT(!want[k].shape || *want[k].shape == out[k].shape,
                     node.op_type + " output #" + std::to_string(k) + ": the kernel's shape " +
                         ir::shape_string(out[k].shape) + " differs from its schema's " +
                         ir::shape_string(*want[k].shape));
    return out;
  } catch (Error& e) {
    e.add_context(node.describe(node_index));
    throw;
  }
}

const OpSchema* schema_of(const ir::Node& node) {
  return find_op(node.domain, node.op_type, node.opset);
}

std::vector<const OpSchema*> all_ops() {
  std::vector<const OpSchema*> out;
  for (const OpSchema& d : table().defs) out.push_back(&d);
  return out;
}

}  // namespace onnx_tv::ops
