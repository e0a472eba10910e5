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

// The value of a constant: an initializer or a Constant node's.
const ir::ConstTensor* constant_tensor(const ir::Graph& g, const std::string& name,
                                       const std::unordered_map<std::string, const ir::Node*>& producer) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return &it->second;
  auto p = producer.find(name);
  if (p != producer.end() && p->second->op_type == "Constant")
    if (const ir::Attribute* v = p->second->attribute("value"); v && v->tensor) return v->tensor.get();
  return nullptr;
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
  // Index tuples made by Unsqueeze (ids[..., None]) or by a Reshape to a constant shape.
  if ((n.op_type == "Unsqueeze" || n.op_type == "Reshape") && !n.inputs.empty()) {
    std::vector<int64_t> arg;
    if (n.inputs.size() > 1) {
      const ir::ConstTensor* c = constant_tensor(g, n.inputs[1], producer);
      if (!c) return std::nullopt;
      arg = c->ints;
    } else if (const ir::Attribute* axes = n.attribute("axes")) {
      arg = axes->ints;
    }
    if (n.op_type == "Reshape") {
      if (std::any_of(arg.begin(), arg.end(), [](int64_t d) { return d <= 0; })) return std::nullopt;
      return ir::Shape(arg.begin(), arg.end());
    }
    std::optional<ir::Shape> in = data_shape(g, n.inputs[0], producer);
    if (!in) return std::nullopt;
    const int64_t rank = int64_t(in->size() + arg.size());
    std::vector<int64_t> axes = arg;
    for (int64_t& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) {
      if (a < 0 || a > int64_t(in->size())) return std::nullopt;
      in->insert(in->begin() + a, 1);
    }
    return in;
  }
  // A scatter's zeros: ConstantOfShape of a constant shape, or of Shape(x) for a static x.
  if (n.op_type == "ConstantOfShape" && !n.inputs.empty()) {
    auto q = producer.find(n.inputs[0]);
    if (q != producer.end() && q->second->op_type == "Shape" && !q->second->inputs.empty() &&
        q->second->attributes.empty())
      return data_shape(g, q->second->inputs[0], producer);
    const ir::ConstTensor* c = constant_tensor(g, n.inputs[0], producer);
    if (c && !c->ints.empty()) return ir::Shape(c->ints.begin(), c->ints.end());
  }
  return std::nullopt;
}

// The single integer of a constant (an initializer or a Constant node), as OneHot's depth.
std::optional<int64_t> constant_int(const ir::Graph& g, const std::string& name,
                                    const std::unordered_map<std::string, const ir::Node*>& producer) {
  const ir::ConstTensor* c = constant_tensor(g, name, producer);
  if (!c) return std::nullopt;
  if (c->ints.size() == 1) return c->ints[0];
  if (c->reals.size() == 1 && c->reals[0] >= 1 && c->reals[0] < 1e15) return int64_t(c->reals[0]);
  return std::nullopt;
}

// Which input of an indexing node holds indices, and the extent they index: Gather,
// GatherElements, ScatterElements (and Scatter) along `axis`; GatherND and ScatterND along
// their tuples' axes (the smallest); OneHot below its depth.
struct Indexing {
  size_t indices;
  int64_t extent;
};

std::optional<Indexing> indexing(const ir::Graph& g, const ir::Node& n,
                                 const std::unordered_map<std::string, const ir::Node*>& producer) {
  if ((n.domain != "" && n.domain != "ai.onnx") || n.inputs.size() < 2) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "OneHot") {
    const std::optional<int64_t> depth = constant_int(g, n.inputs[1], producer);
    if (!depth || *depth < 1) return std::nullopt;
    return Indexing{0, *depth};
  }
  const bool along_axis = op == "Gather" || op == "GatherElements" || op == "ScatterElements" ||
                          op == "Scatter";
  const bool tuples = op == "GatherND" || op == "ScatterND";
  if (!along_axis && !tuples) return std::nullopt;
  const std::optional<ir::Shape> data = data_shape(g, n.inputs[0], producer);
  if (!data || data->empty()) return std::nullopt;
  const int64_t rank = int64_t(data->size());
  int64_t from = 0, to = 0;  // the data axes [from, to) the indices index
  if (along_axis) {
    int64_t axis = 0;
    if (const ir::Attribute* at = n.attribute("axis")) axis = at->i;
    if (axis < 0) axis += rank;
    from = axis, to = axis + 1;
  } else {
    const std::optional<ir::Shape> ind = data_shape(g, n.inputs[1], producer);
    if (!ind || ind->empty()) return std::nullopt;
    from = n.attribute("batch_dims") ? n.attribute("batch_dims")->i : 0;
    to = from + ind->back();
  }
  if (from < 0 || to > rank || from >= to) return std::nullopt;
  int64_t extent = INT64_MAX;
  for (int64_t a = from; a < to; ++a) extent = std::min(extent, (*data)[size_t(a)]);
  if (extent < 1) return std::nullopt;
  return Indexing{1, extent};
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
    if (n.outputs.empty() || !live.count(n.outputs[0])) continue;
    const std::optional<Indexing> ix = indexing(spec, n, producer);
    if (!ix) continue;
    auto it = origin.find(n.inputs[ix->indices]);
    if (it == origin.end()) continue;
    const int64_t size = ix->extent;
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
