// The checks of a micro-batched program's bodies (micro_batch_detail.h): which nodes are whose,
// the sums they meet in, and that every body is body 0 renamed.
#include <algorithm>
#include <optional>

#include "ir/comm_parse.h"
#include "ops/registry.h"
#include "reduce/micro_batch_detail.h"

namespace onnx_tv::reduce::micro {

namespace {

// Attributes equal, except the tags and keys that tell apart the instances of comm ops.
bool same_attributes(const ir::Node& a, const ir::Node& b) {
  if (a.attributes.size() != b.attributes.size()) return false;
  const bool comm = ir::is_comm_op(a);
  for (auto ia = a.attributes.begin(), ib = b.attributes.begin(); ia != a.attributes.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (comm && (ia->first == "tag" || ia->first == "key")) continue;
    const ir::Attribute& x = ia->second;
    const ir::Attribute& y = ib->second;
    if (x.kind != y.kind || x.i != y.i || x.f != y.f || x.s != y.s || x.ints != y.ints ||
        x.floats != y.floats || x.strings != y.strings || x.graph != y.graph)
      return false;
    if (x.tensor != y.tensor &&
        (!x.tensor || !y.tensor || x.tensor->dtype != y.tensor->dtype ||
         x.tensor->shape != y.tensor->shape || x.tensor->reals != y.tensor->reals ||
         x.tensor->ints != y.tensor->ints))
      return false;
  }
  return true;
}

// Two initializers of equal content: an exporter may write a body's constants once per body.
// (Only for initializers no binding names: a bound one is an input, whatever it stores.)
bool same_initializer(const ir::Graph& g, const std::string& x, const std::string& y) {
  auto a = g.initializers.find(x), b = g.initializers.find(y);
  return a != g.initializers.end() && b != g.initializers.end() &&
         a->second.dtype == b->second.dtype && a->second.shape == b->second.shape &&
         a->second.reals == b->second.reals && a->second.ints == b->second.ints;
}

// A declared type and shape as text: equal texts are equal declarations.
std::string text(const ir::ValueInfo& vi) {
  std::string out = std::to_string(int(vi.dtype)) + ":";
  if (!vi.shape) return out + "?";
  for (const auto& d : *vi.shape) out += (d.size ? std::to_string(*d.size) : d.symbol) + ",";
  return out;
}

// The types and shapes a graph declares (graph inputs and outputs, value_info), as text per value: the
// bodies left out are not run, so their declarations are compared with body 0's instead.
std::unordered_map<std::string, std::string> declarations(const ir::Graph& g) {
  std::unordered_map<std::string, std::string> out;
  for (const auto& [name, vi] : g.value_info) out[name] += text(vi);
  for (const auto& vi : g.outputs) out[vi.name] += "|" + text(vi);
  for (const auto& vi : g.inputs) out[vi.name] += "<" + text(vi);
  return out;
}

// The one type and shape declared for a value, "" when none is; where the graph declares it
// twice (value_info and a graph output) and differently, something no shape satisfies.
std::string shape_declared(const ir::Graph& g, const std::string& v) {
  std::string out;
  auto add = [&](const ir::ValueInfo& vi) {
    const std::string t = text(vi);
    out = out.empty() || out == t ? t : "(contradictory)";
  };
  if (auto it = g.value_info.find(v); it != g.value_info.end()) add(it->second);
  for (const auto& vi : g.outputs)
    if (vi.name == v) add(vi);
  return out;
}


// A node that depends on no micro-batch but serves only one (a Constant, a reshape target
// computed per body) belongs to that body: bodies that write their constants once each still
// match node for node. Nodes in `whole` (comm ops, the starts of chains) and graph outputs
// serve every micro-batch.
void assign_served(const ir::Graph& g, std::vector<Colour>& colour, const std::vector<bool>& whole,
                   int64_t n) {
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) consumers[in].push_back(i);
  std::unordered_map<std::string, bool> graph_output;
  for (const auto& vi : g.outputs) graph_output[vi.name] = true;
  Colour all;
  for (int64_t k = 0; k < n; ++k) add_to(all, one_colour(k));
  std::vector<Colour> served(g.nodes.size());
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (whole[i] || ir::is_comm_op(g.nodes[i])) {
      served[i] = all;
      continue;
    }
    if (popcount(colour[i])) continue;
    bool shared = false;
    for (const auto& o : g.nodes[i].outputs) {
      if (o.empty()) continue;
      auto it = consumers.find(o);
      shared = shared || graph_output.count(o) || it == consumers.end();
      if (it == consumers.end()) continue;
      for (size_t u : it->second)
        add_to(served[i], whole[u] ? all : popcount(colour[u]) ? colour[u] : served[u]);
    }
    if (shared) served[i] = all;
    if (popcount(served[i]) == 1) colour[i] = served[i];
  }
}


}  // namespace

// The bodies of one rank's program, or why they cannot be cut (NoBodies).
std::variant<ProgramBodies, NoBodies> bodies_of(const Coloured& c, int64_t n) {
  const ir::Graph& g = *c.g;
  const Colour all = [&] {
    Colour a;
    for (int64_t k = 0; k < n; ++k) add_to(a, one_colour(k));
    return a;
  }();
  auto here = [&](size_t i) { return c.label + ": " + g.nodes[i].describe(i); };
  std::vector<Colour> colour = c.node_colour;  // with the nodes each body alone serves
  std::unordered_map<std::string, size_t> producer, uses, user;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) {
        ++uses[in];
        user[in] = i;
      }
  }
  std::map<std::string, bool> graph_output;
  for (const auto& vi : g.outputs) graph_output[vi.name] = true;
  const auto decl = declarations(g);
  auto declared_as = [&](const std::string& v) {
    auto it = decl.find(v);
    return it == decl.end() ? std::string() : it->second;
  };
  auto is_sum = [&](size_t i) {
    const ops::OpSchema* s = ops::schema_of(g.nodes[i]);
    return s && s->traits.algebra == ops::Algebra::Sum;
  };
  // The node reading `v`, when one node alone does and v is not a graph output.
  auto only_user = [&](const std::string& v) -> std::optional<size_t> {
    auto u = uses.find(v);
    if (u == uses.end() || u->second != 1 || graph_output.count(v)) return std::nullopt;
    return user.at(v);
  };

  // An accumulation may start from a value no micro-batch computes (a gradient buffer, zeros):
  // its first Add, buffer + g_k, is then a node of body k alone. Such a node starts its chain
  // when only the next sum reads it and no other node of the chain is one like it; it is then
  // a partial sum, and the buffer is added once, as in the full program. (Where every body
  // adds a shared value before the chain, there is one such node per body: they stay the
  // bodies' own, and the bodies compare as usual.)
  std::vector<bool> start(g.nodes.size(), false);
  std::map<size_t, std::vector<size_t>> starts_of;  // total -> the starts of its chain
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Colour& col = colour[i];
    if (popcount(col) != 1 || !is_sum(i) || g.nodes[i].outputs.size() != 1) continue;
    int shared = 0, own = 0;  // inputs of no micro-batch, and of this node's
    bool other = false;
    for (const auto& in : g.nodes[i].inputs) {
      const Colour& ic = colour_of(c, in);
      if (in.empty()) other = true;
      else if (popcount(ic) == 0) ++shared;
      else if (ic == col) ++own;
      else other = true;
    }
    if (!shared || own != 1 || other) continue;
    std::optional<size_t> t = only_user(g.nodes[i].outputs[0]);
    while (t && is_sum(*t) && popcount(colour[*t]) > 1 && popcount(colour[*t]) < n)
      t = only_user(g.nodes[*t].outputs[0]);
    if (t && is_sum(*t) && popcount(colour[*t]) == n) starts_of[*t].push_back(i);
  }
  for (const auto& [t, firsts] : starts_of)
    if (firsts.size() == 1) start[firsts[0]] = true;
  assign_served(g, colour, start, n);

  ProgramBodies out;
  out.bodies.resize(size_t(n));
  for (const auto& [v, p] : c.pieces) out.piece_of[v] = p.k;
  std::vector<bool> partial_sum(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    const Colour& col = colour[i];
    const int64_t count = popcount(col);
    if (start[i]) {
      partial_sum[i] = true;
      continue;
    }
    if (count == 1) {
      out.bodies[size_t(single(col))].push_back(i);
      continue;
    }
    if (count == 0) continue;
    // A node of several micro-batches: a sum of disjoint ones, or one that sees only totals.
    bool sums = is_sum(i);
    Colour seen;
    for (const auto& in : node.inputs) {
      const Colour& ic = colour_of(c, in);
      if (in.empty() || popcount(ic) == 0 || !disjoint(seen, ic)) sums = false;
      add_to(seen, ic);
    }
    if (sums) {
      partial_sum[i] = true;
      continue;
    }
    for (const auto& in : node.inputs) {
      const int64_t ic = popcount(colour_of(c, in));
      if (ic != 0 && ic != n)
        return NoBodies{here(i) + " combines values of some micro-batches other than by a sum"};
    }
  }
  // Partial sums feed exactly one other partial sum; the last of each chain is a total.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!partial_sum[i]) continue;
    const std::string& o = g.nodes[i].outputs[0];
    if (popcount(colour[i]) != n) {
      auto u = uses.find(o);
      if (graph_output.count(o) || u == uses.end() || u->second != 1)
        return NoBodies{here(i) + " adds some micro-batches and is used elsewhere than in the next sum"};
      out.partial_sums.push_back(i);
      continue;
    }
    Total total{i, std::vector<std::string>(static_cast<size_t>(n)), {}, ""};
    std::string declared = shape_declared(g, g.nodes[i].outputs[0]);
    std::vector<size_t> stack{i};
    while (!stack.empty()) {
      const size_t s = stack.back();
      stack.pop_back();
      // The cut program does not compute the partial sums: what they declare must be what
      // the total is (and is then declared for it).
      const std::string& mine = g.nodes[s].outputs[0];
      if (s != i && !shape_declared(g, mine).empty()) {
        if (declared.empty()) {
          declared = shape_declared(g, mine);
          total.declared_from = mine;
        } else if (shape_declared(g, mine) != declared) {
          return NoBodies{here(s) + " declares its sum other than " + here(i)};
        }
      }
      for (const auto& in : g.nodes[s].inputs) {
        auto p = producer.find(in);
        if (p != producer.end() && partial_sum[p->second]) {
          stack.push_back(p->second);
          continue;
        }
        const Colour& ic = colour_of(c, in);
        if (popcount(ic) == 1) {
          std::string& leaf = total.leaves[size_t(single(ic))];
          if (!leaf.empty())
            return NoBodies{here(s) + " adds a second value of micro-batch " +
                           std::to_string(single(ic))};
          leaf = in;
        } else if (popcount(ic) == 0 && start[s]) {
          total.shared.push_back(in);
        } else {
          return NoBodies{here(s) + " adds a value of several micro-batches that no sum made"};
        }
      }
    }
    for (const auto& leaf : total.leaves)
      if (leaf.empty()) return NoBodies{here(i) + " adds no value of some micro-batch"};
    out.totals.push_back(std::move(total));
  }
  for (const auto& [o, is_out] : graph_output) {
    const Colour& oc = colour_of(c, o);
    const int64_t k = popcount(oc);
    if (k == 0 || k == n) continue;
    auto p = c.pieces.find(o);
    if (k != 1 || p == c.pieces.end() || p->second.k != single(oc))
      return NoBodies{c.label + ": graph output '" + o + "' depends on some micro-batches but is not bound to one"};
  }
  for (const auto& [v, p] : c.pieces) {
    const Colour& vc = colour_of(c, v);
    if (popcount(vc) != 1 || single(vc) != p.k)
      return NoBodies{c.label + ": '" + v + "' is bound to micro-batch " + std::to_string(p.k) +
          " but is computed from others"};
  }
  // Body k is body 0 renamed: node for node, in file order.
  std::unordered_map<size_t, size_t> position;  // node -> index in its body
  for (const auto& body : out.bodies)
    for (size_t j = 0; j < body.size(); ++j) position[body[j]] = j;
  std::map<std::pair<int64_t, int64_t>, std::string> piece_value;  // (family, k) -> value
  for (const auto& [v, p] : c.pieces) piece_value[{p.family, p.k}] = v;
  auto renamed = [&](const std::string& v0, int64_t k) -> std::string {
    auto p = producer.find(v0);
    if (p != producer.end() && popcount(colour[p->second]) == 1) {
      const ir::Node& mine = g.nodes[out.bodies[size_t(k)][position.at(p->second)]];
      const auto& outs = g.nodes[p->second].outputs;
      const size_t slot = size_t(std::find(outs.begin(), outs.end(), v0) - outs.begin());
      return slot < mine.outputs.size() ? mine.outputs[slot] : "";
    }
    auto f = c.pieces.find(v0);
    if (f != c.pieces.end()) {
      auto q = piece_value.find({f->second.family, k});
      return q == piece_value.end() ? "" : q->second;
    }
    return v0;  // shared: the same value in every body
  };
  for (int64_t k = 1; k < n; ++k) {
    if (out.bodies[size_t(k)].size() != out.bodies[0].size())
      return NoBodies{c.label + ": micro-batch " + std::to_string(k) + " runs " +
          std::to_string(out.bodies[size_t(k)].size()) + " nodes, micro-batch 0 " +
          std::to_string(out.bodies[0].size())};
    for (size_t j = 0; j < out.bodies[0].size(); ++j) {
      const ir::Node& a = g.nodes[out.bodies[0][j]];
      const size_t bi = out.bodies[size_t(k)][j];
      const ir::Node& b = g.nodes[bi];
      bool same = a.op_type == b.op_type && a.domain == b.domain && a.opset == b.opset &&
                  a.inputs.size() == b.inputs.size() && a.outputs.size() == b.outputs.size() &&
                  same_attributes(a, b);
      for (size_t s = 0; same && s < a.inputs.size(); ++s)
        same = a.inputs[s].empty() ? b.inputs[s].empty()
                                   : renamed(a.inputs[s], k) == b.inputs[s] ||
                                         (!c.bindings.count(a.inputs[s]) &&
                                          !c.bindings.count(b.inputs[s]) &&
                                          same_initializer(g, a.inputs[s], b.inputs[s]));
      for (size_t s = 0; same && s < a.outputs.size(); ++s) {
        same = a.outputs[s].empty() == b.outputs[s].empty() &&
               declared_as(a.outputs[s]) == declared_as(b.outputs[s]);
        const auto pa = c.pieces.find(a.outputs[s]), pb = c.pieces.find(b.outputs[s]);
        const bool bound_a = pa != c.pieces.end(), bound_b = pb != c.pieces.end();
        same = same && bound_a == bound_b &&
               graph_output.count(a.outputs[s]) == graph_output.count(b.outputs[s]) &&
               (!bound_a || (pa->second.family == pb->second.family && pa->second.k == 0 &&
                             pb->second.k == k));
      }
      if (!same)
        return NoBodies{here(bi) + " of micro-batch " + std::to_string(k) + " differs from " +
            a.describe(out.bodies[0][j]) + " of micro-batch 0"};
    }
  }
  // The pieces left out are not bound: each declares what piece 0 of its family declares.
  for (const auto& [v, p] : c.pieces) {
    auto first = piece_value.find({p.family, 0});
    if (first != piece_value.end() && declared_as(v) != declared_as(first->second))
      return NoBodies{c.label + ": '" + v + "' is declared other than '" + first->second + "'"};
  }
  for (const auto& t : out.totals)
    for (int64_t k = 1; k < n; ++k)
      if (t.leaves[size_t(k)] != renamed(t.leaves[0], k))
        return NoBodies{here(t.node) + " adds '" + t.leaves[size_t(k)] + "' for micro-batch " +
                       std::to_string(k) + " where micro-batch 0 adds '" + t.leaves[0] + "'"};
  return out;
}


}  // namespace onnx_tv::reduce::micro
