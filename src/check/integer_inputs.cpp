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
    const ir::Attribute* to = n.attribute("to");
    return to && ir::is_integer(ir::DType(to->i));
  }
  return false;
}

// The values the spec's outputs depend on: a Gather whose result is unused narrows nothing.
std::set<std::string> live_values(const ir::Graph& g) {
  std::set<std::string> live;
  for (const auto& o : g.outputs) live.insert(o.name);
  for (auto n = g.nodes.rbegin(); n != g.nodes.rend(); ++n) {
    const bool used = std::any_of(n->outputs.begin(), n->outputs.end(),
                                  [&](const std::string& o) { return live.count(o) > 0; });
    if (used) live.insert(n->inputs.begin(), n->inputs.end());
  }
  return live;
}

// The static shape of a Gather's data: an input, initializer or declared value, or one an
// Identity, Cast or Constant node makes.
std::optional<ir::Shape> data_shape(const ir::Graph& g, const std::string& name,
                                    const std::unordered_map<std::string, const ir::Node*>& producer) {
  if (auto s = static_shape(g, name)) return s;
  if (auto it = g.value_info.find(name); it != g.value_info.end() && it->second.shape) {
    ir::Shape s;
    for (const auto& d : *it->second.shape) {
      if (!d.size) return std::nullopt;
      s.push_back(*d.size);
    }
    return s;
  }
  auto p = producer.find(name);
  if (p == producer.end()) return std::nullopt;
  const ir::Node& n = *p->second;
  if ((n.op_type == "Identity" || n.op_type == "Cast") && !n.inputs.empty())
    return data_shape(g, n.inputs[0], producer);
  if (n.op_type == "Constant")
    if (const ir::Attribute* v = n.attribute("value"); v && v->tensor) return v->tensor->shape;
  return std::nullopt;
}

}  // namespace

std::map<std::string, IntegerRange> integer_input_ranges(const ir::Graph& spec) {
  std::map<std::string, IntegerRange> out;
  std::set<std::string> inputs;
  auto consider = [&](const std::string& name, ir::DType t) {
    if (t == ir::DType::Bool) out[name] = {0, 2, "it is a bool"};
    else if (ir::is_integer(t)) inputs.insert(name);
  };
  for (const auto& vi : spec.inputs) consider(vi.name, vi.dtype);
  for (const auto& [name, c] : spec.initializers) consider(name, c.dtype);
  const std::set<std::string> live = live_values(spec);
  std::unordered_map<std::string, const ir::Node*> producer;
  for (const ir::Node& n : spec.nodes)
    for (const auto& o : n.outputs) producer[o] = &n;
  // Each value's origin among the integer inputs, through ops that only move it.
  std::unordered_map<std::string, std::string> origin;
  for (const std::string& i : inputs) origin[i] = i;
  for (size_t k = 0; k < spec.nodes.size(); ++k) {
    const ir::Node& n = spec.nodes[k];
    if (!n.inputs.empty() && moves_only(n) && n.outputs.size() == 1) {
      if (auto it = origin.find(n.inputs[0]); it != origin.end()) origin[n.outputs[0]] = it->second;
      continue;
    }
    if (n.op_type != "Gather" || n.inputs.size() < 2 || n.outputs.empty() || !live.count(n.outputs[0]))
      continue;
    auto it = origin.find(n.inputs[1]);
    if (it == origin.end()) continue;
    const std::optional<ir::Shape> data = data_shape(spec, n.inputs[0], producer);
    if (!data || data->empty()) continue;
    int64_t axis = 0;
    if (const ir::Attribute* at = n.attribute("axis")) axis = at->i;
    if (axis < 0) axis += int64_t(data->size());
    if (axis < 0 || axis >= int64_t(data->size()) || (*data)[size_t(axis)] < 1) continue;
    const int64_t size = (*data)[size_t(axis)];
    auto found = out.find(it->second);
    if (found == out.end() || size < found->second.hi)
      out[it->second] = {0, size, "it indexes " + n.describe(k)};
  }
  return out;
}

std::string range_note(const std::string& name, const IntegerRange& r, const ir::Graph& spec) {
  return "integer input '" + name + "' of " + spec.file + " is taken to range over [" +
         std::to_string(r.lo) + ", " + std::to_string(r.hi) + "): " + r.why +
         " (plan-format section 1); EQUIVALENT holds for inputs in that range";
}

}  // namespace onnx_tv::check
