#include "check/integer_inputs.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "check/bindings.h"

namespace onnx_tv::check {

namespace {

bool moves_only(const ir::Node& n) {
  static const std::set<std::string> movers = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                               "Identity"};
  if (n.domain != "" && n.domain != "ai.onnx") return false;
  if (movers.count(n.op_type)) return true;
  if (n.op_type == "Cast") {
    auto it = n.attributes.find("to");
    return it != n.attributes.end() && ir::is_integer(ir::DType(it->second.i));
  }
  return false;
}

}  // namespace

std::map<std::string, std::pair<int64_t, int64_t>> integer_input_ranges(const ir::Graph& spec) {
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  std::set<std::string> inputs;
  for (const auto& vi : spec.inputs) {
    if (spec.initializers.count(vi.name)) continue;
    if (vi.dtype == ir::DType::Bool) out[vi.name] = {0, 2};
    else if (ir::is_integer(vi.dtype)) inputs.insert(vi.name);
  }
  // Each value's origin among the integer inputs, through ops that only move it.
  std::unordered_map<std::string, std::string> origin;
  for (const std::string& i : inputs) origin[i] = i;
  for (const ir::Node& n : spec.nodes) {
    if (!n.inputs.empty() && moves_only(n) && n.outputs.size() == 1) {
      if (auto it = origin.find(n.inputs[0]); it != origin.end()) origin[n.outputs[0]] = it->second;
      continue;
    }
    if (n.op_type != "Gather" || n.inputs.size() < 2) continue;
    auto it = origin.find(n.inputs[1]);
    if (it == origin.end()) continue;
    const std::optional<ir::Shape> data = static_shape(spec, n.inputs[0]);
    if (!data || data->empty()) continue;
    int64_t axis = 0;
    if (auto at = n.attributes.find("axis"); at != n.attributes.end()) axis = at->second.i;
    if (axis < 0) axis += int64_t(data->size());
    if (axis < 0 || axis >= int64_t(data->size()) || (*data)[size_t(axis)] < 1) continue;
    const int64_t size = (*data)[size_t(axis)];
    auto [r, fresh] = out.try_emplace(it->second, 0, size);
    if (!fresh) r->second.second = std::min(r->second.second, size);
  }
  return out;
}

}  // namespace onnx_tv::check
