#include "ir/binding_side.h"

#include <algorithm>

namespace onnx_tv::ir {

namespace {

bool listed(const std::vector<ValueInfo>& infos, const std::string& name) {
  return std::any_of(infos.begin(), infos.end(), [&](const auto& vi) { return vi.name == name; });
}

}  // namespace

bool is_input_side(const BindingNames& n) {
  if (!n.rank_output) return n.rank_input || n.rank_initializer;
  if (n.rank_input) return n.spec_in;
  if (n.rank_initializer) return !n.spec_out;
  return false;
}

bool is_input_binding(const Binding& b, const Graph& rank, const Graph& spec) {
  BindingNames n;
  n.rank_input = listed(rank.inputs, b.value);
  n.rank_initializer = !n.rank_input && rank.initializers.count(b.value);
  n.rank_output = listed(rank.outputs, b.value);
  n.spec_in = listed(spec.inputs, b.spec) || spec.initializers.count(b.spec);
  n.spec_out = listed(spec.outputs, b.spec);
  return is_input_side(n);
}

}  // namespace onnx_tv::ir
