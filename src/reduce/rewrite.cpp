// The reduced programs: every declared shape at its reduced size, every operand that carries a
// size or a position re-expressed over the reduced dimensions, sizes read as data (a mean's
// divisor, a size cast to float) frozen at their full-size values on both sides, and constants
// along reduced dimensions refilled or turned into symbolic tables.
#include <algorithm>
#include <limits>

#include "common/errors.h"
#include "ops/registry.h"
#include "reduce/reduce.h"
#include "reduce/reduce_detail.h"
#include "reduce/sum_site.h"

namespace onnx_tv::reduce {

namespace {

using ir::ConstTensor;
using ir::DType;
using ir::Node;

ConstTensor ints_tensor(DType t, const std::vector<int64_t>& v, bool scalar) {
  ConstTensor c;
  c.dtype = t == DType::Undefined ? DType::Int64 : t;
  if (!scalar) c.shape = {int64_t(v.size())};
  c.exact = ir::is_float(c.dtype);  // a count, not a float of its type
  if (c.exact)
    for (auto x : v) c.reals.push_back(double(x));
  else
    c.ints = v;
  return c;
}

// Operands the rules read as integers already (rules.cpp), so they are.
std::vector<int64_t> concrete_ints(Inference& inf, const DimValue& v) {
  auto out = integer_values(inf, v);
  ONNX_TV_ASSERT(out.has_value(), "a concrete operand is not an integer");
  return *out;
}

ir::ConstTensor refill(const ConstTensor& c, const ir::Shape& shape) {
  ConstTensor out;
  out.dtype = c.dtype;
  out.shape = shape;
  const int64_t n = ir::element_count(shape);
  if (!c.reals.empty()) out.reals.assign(size_t(n), c.reals[0]);
  if (!c.ints.empty()) out.ints.assign(size_t(n), c.ints[0]);
  if (c.reals.empty() && c.ints.empty()) {  // an empty constant stays empty
    if (ir::is_float(c.dtype)) out.reals.assign(size_t(n), 0);
    else out.ints.assign(size_t(n), 0);
  }
  return out;
}

std::vector<ir::Dim> dims_of(const std::vector<int64_t>& s) {
  std::vector<ir::Dim> out;
  for (auto x : s) out.push_back(ir::Dim{x, ""});
  return out;
}

struct Rewriter {
  Inference& inf;
  ProgramDims& p;
  ir::Graph g;  // the reduced graph being built
  std::vector<Node> nodes;
  int counter = 0;

  std::string add_const(const std::string& hint, ConstTensor c) {
    std::string name = "onnx_tv.reduced." + hint + "." + std::to_string(counter++);
    g.initializers[name] = std::move(c);
    return name;
  }
  const DimValue& val(const std::string& name) { return p.values.at(name); }
  std::vector<int64_t> red(const DimShape& s) { return inf.dims.reduced_shape(s); }

  int64_t position(size_t i, const Axis& a, int64_t full_pos) {
    auto r = inf.dims.reduced_position(a, full_pos);
    if (!r) cannot(p, i, "position " + std::to_string(full_pos) + " is not a block boundary");
    return *r;
  }

  // A shape operand replaced by its reduced values.
  void set_operand(Node& n, size_t slot, const std::vector<int64_t>& v, bool scalar = false) {
    DType t = DType::Int64;
    if (slot < n.inputs.size() && !n.inputs[slot].empty()) t = val(n.inputs[slot]).dtype;
    std::string hint = n.outputs.empty() ? n.op_type : n.outputs[0];
    std::string name = add_const(hint, ints_tensor(t, v, scalar));
    if (slot >= n.inputs.size()) n.inputs.resize(slot + 1);
    n.inputs[slot] = name;
  }

  void rewrite_node(size_t i) {
    Node n = p.graph->nodes[i];
    const ops::OpSchema* schema = ops::schema_of(n);
    const ops::DimRule rule = schema ? schema->traits.rule : ops::DimRule::Broadcast;
    bool concrete_out = !n.outputs.empty() && !n.outputs[0].empty() &&
                        p.values.count(n.outputs[0]) && val(n.outputs[0]).concrete.has_value();
    if (concrete_out) {  // recomputed from reduced shapes; its readers are rewritten
      nodes.push_back(std::move(n));
      return;
    }
    // Sizes read as data keep their full-size value.
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty() || is_shape_slot(n, k)) continue;
      const DimValue& v = val(n.inputs[k]);
      if (v.concrete && v.size_derived) {
        ConstTensor c = ints_tensor(v.concrete->dtype, concrete_ints(inf, v), true);
        c.shape = v.concrete->shape;
        n.inputs[k] = add_const("full_size", std::move(c));
      }
    }
    if (rule == ops::DimRule::Reshape) {
      std::vector<int64_t> target = concrete_ints(inf, val(n.inputs[1]));
      const DimShape& out = val(n.outputs[0]).dims;
      for (size_t k = 0; k < target.size(); ++k)
        if (target[k] != 0 && target[k] != -1) target[k] = inf.dims.reduced(out[k]);
      set_operand(n, 1, target);
    } else if (rule == ops::DimRule::Expand) {
      std::vector<int64_t> target = concrete_ints(inf, val(n.inputs[1]));
      const DimShape& out = val(n.outputs[0]).dims;
      for (size_t k = 0; k < target.size(); ++k)
        if (target[k] != 1) target[k] = inf.dims.reduced(out[out.size() - target.size() + k]);
      set_operand(n, 1, target);
    } else if (rule == ops::DimRule::Tile) {
      // Repeats are counts, kept at full size even when computed from a reduced shape.
      set_operand(n, 1, concrete_ints(inf, val(n.inputs[1])));
    } else if ((rule == ops::DimRule::TopK || rule == ops::DimRule::OneHot) && n.inputs.size() > 1 &&
               !n.inputs[1].empty()) {
      // TopK's K and OneHot's depth are extents of axes that keep their full size (their
      // rules fix them), so the values keep it too, even when computed from a reduced shape.
      const DimValue& k = val(n.inputs[1]);
      set_operand(n, 1, concrete_ints(inf, k), k.concrete && k.concrete->shape.empty());
    } else if (rule == ops::DimRule::ConstantOfShape) {
      set_operand(n, 0, red(val(n.outputs[0]).dims));
    } else if (rule == ops::DimRule::Slice) {
      rewrite_slice(n, i);
    } else if (rule == ops::DimRule::Split) {
      std::vector<int64_t> sizes;
      const DimValue& x = val(n.inputs[0]);
      int64_t axis = n.attribute("axis") ? n.attribute("axis")->i : 0;
      if (axis < 0) axis += int64_t(x.dims.size());
      for (const auto& o : n.outputs) sizes.push_back(inf.dims.reduced(val(o).dims[size_t(axis)]));
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) set_operand(n, 1, sizes);
      else if (n.attributes.count("split")) n.attributes["split"].ints = sizes;
      else if (inf.dims.reduced(x.dims[size_t(axis)]) % int64_t(n.outputs.size()) != 0)
        cannot(p, i, "an equal split that the reduced size does not divide");
    } else if (rule == ops::DimRule::Range) {
      const int64_t s = concrete_ints(inf, val(n.inputs[0]))[0];
      const int64_t d = concrete_ints(inf, val(n.inputs[2]))[0];
      const Axis& out = val(n.outputs[0]).dims[0];
      const int64_t len = inf.dims.full(out), rlen = inf.dims.reduced(out);
      if (rlen != len) {
        const int64_t start = (s / len) * rlen;
        set_operand(n, 0, {start}, true);
        set_operand(n, 1, {start + rlen * d}, true);
        // Its values are positions the instance has few of: symbols of the class of its
        // innermost variable, which every Range along that axis shares (docs/shape-reduction.md,
        // "Positions").
        n.domain = "onnx_tv.reduce";
        n.opset = g.opsets["onnx_tv.reduce"] = 1;
        const Axis leaves = inf.dims.leaves(out);
        ir::Attribute axis, full;
        axis.kind = ir::Attribute::Kind::String;
        axis.s = "v" + std::to_string(leaves.back());
        n.attributes["axis"] = axis;
        // The full program's position each element stands for, from the Range's own start.
        ReducedDim dim{n.outputs[0], 0, len, rlen, {}};
        for (Var v : leaves) dim.factors.push_back({inf.dims.full_of(v), inf.dims.reduced_extent(v), ""});
        full.kind = ir::Attribute::Kind::Ints;
        for (int64_t i = 0; i < rlen; ++i) {
          const std::optional<int64_t> index = full_position(dim, i);
          ONNX_TV_ASSERT(index.has_value(), "a Range's axis without its factors");
          full.ints.push_back(s + *index * d);
        }
        n.attributes["full"] = full;
      }
    } else if (rule == ops::DimRule::Trilu) {
      rewrite_trilu(n, i);
    } else if (n.op_type == "ReduceMean") {  // its divisor, a count, keeps its full size
      rewrite_mean(n, i);
      return;
    }
    nodes.push_back(std::move(n));
  }

  void rewrite_slice(Node& n, size_t i) {
    const DimValue& x = val(n.inputs[0]);
    std::vector<int64_t> starts, ends, axes;
    const bool attrs = n.opset < 10;
    if (attrs) {
      starts = n.attributes.at("starts").ints;
      ends = n.attributes.at("ends").ints;
      if (n.attributes.count("axes")) axes = n.attributes.at("axes").ints;
    } else {
      starts = concrete_ints(inf, val(n.inputs[1]));
      ends = concrete_ints(inf, val(n.inputs[2]));
      if (n.inputs.size() > 3 && !n.inputs[3].empty()) axes = concrete_ints(inf, val(n.inputs[3]));
    }
    if (axes.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + int64_t(x.dims.size()) : axes[k];
      const Axis& ax = x.dims[size_t(a)];
      const int64_t full = inf.dims.full(ax);
      auto norm = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + full : v, 0, full); };
      starts[k] = position(i, ax, norm(starts[k]));
      ends[k] = position(i, ax, norm(ends[k]));
    }
    if (attrs) {
      n.attributes["starts"].ints = starts;
      n.attributes["ends"].ints = ends;
    } else {
      set_operand(n, 1, starts);
      set_operand(n, 2, ends);
    }
  }

  void rewrite_trilu(Node& n, size_t i) {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return;
    const int64_t k = concrete_ints(inf, val(n.inputs[1]))[0];
    if (k >= -1 && k <= 1) return;
    const DimShape& x = val(n.inputs[0]).dims;
    const Axis& rows = x[x.size() - 2];
    const Axis& cols = x.back();
    for (int64_t c : {0, 1, -1}) {
      const int64_t q = k - c;
      auto r = inf.dims.reduced_position(q > 0 ? cols : rows, q > 0 ? q : -q);
      if (r) {
        set_operand(n, 1, {c + (q > 0 ? *r : -*r)}, true);
        return;
      }
    }
    cannot(p, i, "a diagonal offset that is not a block boundary");
  }

  // ReduceMean over reduced dimensions divides by the full-size count, as the other side's
  // explicit 1/n constants do: ReduceSum, then Div by that count.
  void rewrite_mean(Node n, size_t i) {
    const DimValue& x = val(n.inputs[0]);
    std::vector<int64_t> axes;
    if (auto* a = n.attribute("axes")) axes = a->ints;
    if (n.inputs.size() > 1 && !n.inputs[1].empty()) axes = concrete_ints(inf, val(n.inputs[1]));
    if (axes.empty())
      for (size_t k = 0; k < x.dims.size(); ++k) axes.push_back(int64_t(k));
    int64_t full = 1, reduced = 1;
    for (auto a : axes) {
      const Axis& ax = x.dims[size_t(a < 0 ? a + int64_t(x.dims.size()) : a)];
      full *= inf.dims.full(ax);
      reduced *= inf.dims.reduced(ax);
    }
    if (full == reduced) {
      nodes.push_back(std::move(n));
      return;
    }
    if (full > (int64_t(1) << 53)) cannot(p, i, "a mean over more than 2^53 elements");
    Node sum = n;
    sum.op_type = "ReduceSum";
    sum.attributes.erase("axes");
    const std::string out = n.outputs[0];
    sum.outputs = {out + kMeanSumSuffix};
    if (sum.opset >= 13) {
      sum.inputs = {n.inputs[0], add_const("axes", ints_tensor(DType::Int64, axes, false))};
    } else {
      sum.inputs = {n.inputs[0]};
      ir::Attribute a;
      a.kind = ir::Attribute::Kind::Ints;
      a.ints = axes;
      sum.attributes["axes"] = a;
    }
    Node div;
    div.name = n.name.empty() ? "" : n.name + "/onnx_tv.full_count";
    div.op_type = "Div";
    div.opset = n.opset;
    ConstTensor count;
    count.dtype = x.dtype;
    count.reals = {double(full)};  // exact below 2^53
    count.exact = true;
    div.inputs = {sum.outputs[0], add_const("full_count", std::move(count))};
    div.outputs = {out};
    nodes.push_back(std::move(sum));
    nodes.push_back(std::move(div));
  }
};

}  // namespace

std::string table_input(const ir::Graph& g, const std::string& name) {
  for (const auto& vi : g.outputs)
    if (vi.name == name) return name + "/onnx_tv.table";
  return name;
}

ir::Graph rewrite_program(Inference& inf, ProgramDims& p, const std::vector<ConstSite>& sites,
                          int64_t rank, const std::set<std::string>& bound_values) {
  Rewriter w{inf, p, *p.graph, {}};
  ir::Graph& g = w.g;
  g.nodes.clear();
  for (auto& [name, vi] : g.value_info) vi.shape.reset();
  auto reduced_of = [&](const std::string& name) { return w.red(p.values.at(name).dims); };
  for (auto& vi : g.inputs)
    if (p.values.count(vi.name)) vi.shape = dims_of(reduced_of(vi.name));
  for (auto& vi : g.outputs)
    if (p.values.count(vi.name)) vi.shape = dims_of(reduced_of(vi.name));
  // Bound initializers are symbolic: only their shape matters.
  for (const auto& name : bound_values)
    if (auto it = g.initializers.find(name); it != g.initializers.end())
      it->second = refill(ConstTensor{it->second.dtype, {}, {}, {}}, reduced_of(name));
  std::map<std::string, const ConstSite*> site_of;
  for (const auto& s : sites)
    if (s.rank == rank) site_of[s.name] = &s;
  std::vector<Node> prelude;
  auto add_input = [&](const std::string& name, DType t, std::vector<Node>& nodes) {
    const std::string in = table_input(*p.graph, name);
    auto it = std::find_if(g.inputs.begin(), g.inputs.end(), [&](auto& vi) { return vi.name == in; });
    ir::ValueInfo vi{in, t, dims_of(reduced_of(name))};
    if (it == g.inputs.end()) g.inputs.push_back(vi);
    else *it = vi;
    if (in == name) return;
    Node id;
    id.name = "onnx_tv.reduced/" + name;
    id.op_type = "Identity";
    id.opset = g.opsets.count("") ? g.opsets.at("") : 13;
    id.inputs = {in};
    id.outputs = {name};
    nodes.push_back(id);
  };
  for (const auto& [name, s] : site_of) {
    auto it = g.initializers.find(name);
    if (it == g.initializers.end()) continue;
    using A = ConstSite::Action;
    if (s->action == A::Refill) {
      it->second = refill(it->second, reduced_of(name));
    } else if (s->action == A::RankTable || (s->action == A::SpecTable && s->table == name)) {
      const DType t = it->second.dtype;
      g.initializers.erase(it);
      add_input(name, t, prelude);
    } else if (s->action == A::SpecTable) {
      g.initializers.erase(it);
      Node id;
      id.name = "onnx_tv.reduced/" + name;
      id.op_type = "Identity";
      id.opset = g.opsets.count("") ? g.opsets.at("") : 13;
      id.inputs = {table_input(*p.graph, s->table)};
      id.outputs = {name};
      prelude.push_back(id);
    }
  }
  w.nodes = prelude;
  for (size_t i = 0; i < p.graph->nodes.size(); ++i) {
    const Node& n = p.graph->nodes[i];
    if (n.op_type == "Constant" && !n.outputs.empty() && site_of.count(n.outputs[0])) {
      const ConstSite& s = *site_of.at(n.outputs[0]);
      using A = ConstSite::Action;
      if (s.action == A::Refill) {
        Node c = n;
        auto t = std::make_shared<ConstTensor>(refill(*n.attribute("value")->tensor, reduced_of(n.outputs[0])));
        c.attributes["value"].tensor = t;
        w.nodes.push_back(std::move(c));
        continue;
      }
      if (s.action == A::RankTable || (s.action == A::SpecTable && s.table == n.outputs[0])) {
        add_input(n.outputs[0], n.attribute("value")->tensor->dtype, w.nodes);
        continue;
      }
      if (s.action == A::SpecTable) {
        Node id = n;
        id.op_type = "Identity";
        id.attributes.clear();
        id.inputs = {table_input(*p.graph, s.table)};
        w.nodes.push_back(std::move(id));
        continue;
      }
    }
    w.rewrite_node(i);
  }
  g.nodes = std::move(w.nodes);
  return g;
}

}  // namespace onnx_tv::reduce
