// Communication ops of a rank, resolved to concrete ranks (plan-format section 5): the onnx_tv
// domain's collectives and Send/Recv, with their rank-generic forms (group_axes, peer_axis),
// and ONNX Runtime's com.microsoft collectives and training Send/Recv over the whole world.
#include <algorithm>
#include <set>

#include "common/checked.h"
#include "common/errors.h"
#include "ir/comm_parse.h"

namespace onnx_tv::ir {

namespace {

constexpr const char* kDomain = "onnx_tv";
constexpr const char* kMicrosoft = "com.microsoft";

struct OpSite {
  const Plan& plan;
  int64_t rank;
  const Graph& graph;
  const Node& node;
  size_t index;

  std::string where() const {
    std::string op = node.domain.empty() ? node.op_type : node.domain + "." + node.op_type;
    op += node.name.empty() ? " node #" + std::to_string(index) + " (unnamed)"
                            : " node '" + node.name + "'";
    return graph.file + ": rank " + std::to_string(rank) + ": " + op;
  }
  [[noreturn]] void fail(const std::string& msg) const { throw InputError(where() + ": " + msg); }

  const Attribute* attr(const std::string& name) const {
    auto it = node.attributes.find(name);
    return it == node.attributes.end() ? nullptr : &it->second;
  }
  const Attribute* attr_of(const std::string& name, Attribute::Kind kind,
                               const char* kind_name) const {
    const Attribute* a = attr(name);
    if (a && a->kind != kind) fail("attribute '" + name + "' must be " + kind_name);
    return a;
  }
  std::optional<int64_t> int_attr(const std::string& name) const {
    const Attribute* a = attr_of(name, Attribute::Kind::Int, "an int");
    return a ? std::optional<int64_t>(a->i) : std::nullopt;
  }
  std::optional<std::string> string_attr(const std::string& name) const {
    const Attribute* a = attr_of(name, Attribute::Kind::String, "a string");
    return a ? std::optional<std::string>(a->s) : std::nullopt;
  }
};

bool is_onnx_tv_op(const std::string& op) {
  static const std::set<std::string> ops = {"AllReduce", "AllGather", "ReduceScatter", "AllToAll",
                                            "Broadcast", "Send",      "Recv"};
  return ops.count(op) > 0;
}

bool is_microsoft_op(const std::string& op) {
  return op == "AllReduce" || op == "AllGather" || op == "AllToAll" || op == "Send" ||
         op == "Recv";
}

CommKind kind_of(const std::string& op) {
  if (op == "AllReduce") return CommKind::AllReduce;
  if (op == "AllGather") return CommKind::AllGather;
  if (op == "ReduceScatter") return CommKind::ReduceScatter;
  if (op == "AllToAll") return CommKind::AllToAll;
  if (op == "Broadcast") return CommKind::Broadcast;
  if (op == "Send") return CommKind::Send;
  return CommKind::Recv;
}

// group / group_axes -> member ranks in group order.
std::vector<int64_t> resolve_group(const OpSite& s) {
  const Attribute* group = s.attr_of("group", Attribute::Kind::Ints, "a list of ints");
  const Attribute* axes =
      s.attr_of("group_axes", Attribute::Kind::Strings, "a list of strings");
  if (group && axes) s.fail("give either 'group' or 'group_axes', not both");
  std::vector<int64_t> members;
  if (group) {
    members = group->ints;
    if (members.empty()) s.fail("attribute 'group' is empty");
    std::set<int64_t> seen;
    for (int64_t r : members) {
      if (r < 0 || r >= s.plan.world_size) {
        s.fail("attribute 'group': rank " + std::to_string(r) + " is outside the world "
               "(world_size " + std::to_string(s.plan.world_size) + ")");
      }
      if (!seen.insert(r).second) {
        s.fail("attribute 'group': rank " + std::to_string(r) + " is listed twice");
      }
    }
  } else if (axes) {
    if (!s.plan.mesh) s.fail("attribute 'group_axes' needs a 'mesh' in plan.json");
    const Mesh& mesh = *s.plan.mesh;
    std::vector<size_t> idx;
    for (const std::string& name : axes->strings) {
      const int64_t a = mesh.axis_index(name);
      if (a < 0) s.fail("attribute 'group_axes': '" + name + "' is not a mesh axis");
      if (std::find(idx.begin(), idx.end(), size_t(a)) != idx.end()) {
        s.fail("attribute 'group_axes': axis '" + name + "' is named twice");
      }
      idx.push_back(size_t(a));
    }
    if (idx.empty()) s.fail("attribute 'group_axes' is empty");
    // Row-major over the named axes, in the order they are named; my coordinates elsewhere.
    std::vector<int64_t> c = mesh.coords(s.rank);
    std::vector<int64_t> counter(idx.size(), 0);
    while (true) {
      for (size_t k = 0; k < idx.size(); ++k) c[idx[k]] = counter[k];
      members.push_back(mesh.rank_of(c));
      size_t k = idx.size();
      while (k > 0 && ++counter[k - 1] == mesh.shape[idx[k - 1]]) counter[--k] = 0;
      if (k == 0) break;
    }
  } else {
    s.fail("needs attribute 'group' (a list of ranks) or 'group_axes' (mesh axis names)");
  }
  if (std::find(members.begin(), members.end(), s.rank) == members.end()) {
    s.fail("rank " + std::to_string(s.rank) + " runs this collective but is not in its group");
  }
  return members;
}

// peer / peer_axis + peer_offset -> the other rank.
int64_t resolve_peer(const OpSite& s) {
  const auto peer = s.int_attr("peer");
  const auto axis = s.string_attr("peer_axis");
  const auto offset = s.int_attr("peer_offset");
  if (peer && (axis || offset)) s.fail("give either 'peer' or 'peer_axis' with 'peer_offset'");
  int64_t p = -1;
  if (peer) {
    p = *peer;
    if (p < 0 || p >= s.plan.world_size) {
      s.fail("attribute 'peer': rank " + std::to_string(p) + " is outside the world "
             "(world_size " + std::to_string(s.plan.world_size) + ")");
    }
  } else if (axis && offset) {
    if (!s.plan.mesh) s.fail("attribute 'peer_axis' needs a 'mesh' in plan.json");
    const Mesh& mesh = *s.plan.mesh;
    const int64_t a = mesh.axis_index(*axis);
    if (a < 0) s.fail("attribute 'peer_axis': '" + *axis + "' is not a mesh axis");
    std::vector<int64_t> c = mesh.coords(s.rank);
    // An offset near 2^63 would wrap; it leaves the mesh like any other too large.
    const int64_t moved = checked_add(c[size_t(a)], *offset).value_or(-1);
    if (moved < 0 || moved >= mesh.shape[size_t(a)]) {
      s.fail("peer_offset " + std::to_string(*offset) + " on axis '" + *axis +
             "' leaves the mesh: rank " + std::to_string(s.rank) + " has coordinate " +
             std::to_string(c[size_t(a)]) + " on an axis of size " +
             std::to_string(mesh.shape[size_t(a)]));
    }
    c[size_t(a)] = moved;
    p = mesh.rank_of(c);
  } else if (axis || offset) {
    s.fail("'peer_axis' and 'peer_offset' must be given together");
  } else {
    s.fail("needs attribute 'peer' or 'peer_axis' with 'peer_offset'");
  }
  if (p == s.rank) s.fail("rank " + std::to_string(p) + " sends to or receives from itself");
  return p;
}

ReduceOp resolve_reduce(const OpSite& s) {
  const std::string r = s.string_attr("reduce").value_or("sum");
  if (r == "sum") return ReduceOp::Sum;
  if (r == "max") return ReduceOp::Max;
  if (r == "min") return ReduceOp::Min;
  s.fail("attribute 'reduce' = '" + r + "' (expected \"sum\", \"max\" or \"min\")");
}

void expect_arity(const OpSite& s, size_t inputs, size_t outputs_min, size_t outputs_max) {
  size_t in = 0;
  for (const auto& n : s.node.inputs) in += n.empty() ? 0 : 1;
  if (in != inputs || s.node.inputs.size() != inputs) {
    s.fail("has " + std::to_string(s.node.inputs.size()) + " inputs, expected " +
           std::to_string(inputs));
  }
  const size_t out = s.node.outputs.size();
  if (out < outputs_min || out > outputs_max || (outputs_min > 0 && s.node.outputs[0].empty())) {
    s.fail("has " + std::to_string(out) + " outputs, expected " + std::to_string(outputs_min) +
           (outputs_max != outputs_min ? " or " + std::to_string(outputs_max) : ""));
  }
}

CommOp parse_onnx_tv(const OpSite& s) {
  static const std::set<std::string> known = {"group", "group_axes", "reduce", "axis",
                                              "split_axis", "concat_axis", "root", "peer",
                                              "peer_axis", "peer_offset", "tag", "key"};
  if (!is_onnx_tv_op(s.node.op_type)) {
    s.fail("unknown communication op (expected AllReduce, AllGather, ReduceScatter, AllToAll, "
           "Broadcast, Send or Recv)");
  }
  for (const auto& [name, a] : s.node.attributes) {
    if (!known.count(name)) s.fail("unknown attribute '" + name + "'");
  }
  CommOp op;
  op.kind = kind_of(s.node.op_type);
  op.node_index = s.index;
  op.key = s.string_attr("key").value_or("");
  switch (op.kind) {
    case CommKind::Send:
      expect_arity(s, 1, 0, 1);
      op.peer = resolve_peer(s);
      op.tag = s.int_attr("tag").value_or(0);
      op.data_input = s.node.inputs[0];
      op.output = s.node.outputs.empty() ? "" : s.node.outputs[0];
      return op;
    case CommKind::Recv:
      expect_arity(s, 0, 1, 1);
      op.peer = resolve_peer(s);
      op.tag = s.int_attr("tag").value_or(0);
      op.output = s.node.outputs[0];
      return op;
    default:
      break;
  }
  expect_arity(s, 1, 1, 1);
  op.group = resolve_group(s);
  op.data_input = s.node.inputs[0];
  op.output = s.node.outputs[0];
  if (op.kind == CommKind::AllReduce || op.kind == CommKind::ReduceScatter) {
    op.reduce = resolve_reduce(s);
  }
  if (op.kind == CommKind::AllGather || op.kind == CommKind::ReduceScatter) {
    op.axis = s.int_attr("axis").value_or(0);
  }
  if (op.kind == CommKind::AllToAll) {
    op.split_axis = s.int_attr("split_axis").value_or(0);
    op.concat_axis = s.int_attr("concat_axis").value_or(0);
  }
  if (op.kind == CommKind::Broadcast) {
    op.root = s.int_attr("root").value_or(0);
    if (op.root < 0 || op.root >= int64_t(op.group.size())) {
      s.fail("attribute 'root' = " + std::to_string(op.root) + " is not an index into the group "
             "of " + std::to_string(op.group.size()) + " ranks");
    }
  }
  return op;
}

// The constant value of a com.microsoft Send/Recv's Remote input: an initializer or the output
// of a Constant node, holding one integer.
int64_t constant_remote(const OpSite& s, const std::string& name) {
  const ConstTensor* t = nullptr;
  auto it = s.graph.initializers.find(name);
  if (it != s.graph.initializers.end()) t = &it->second;
  std::optional<int64_t> direct;
  for (const Node& n : s.graph.nodes) {
    if (t || direct || n.op_type != "Constant" || !n.domain.empty()) continue;
    if (n.outputs.empty() || n.outputs[0] != name) continue;
    for (const auto& [an, a] : n.attributes) {
      if (an == "value" && a.tensor) t = a.tensor.get();
      if (an == "value_int") direct = a.i;
      if (an == "value_ints" && a.ints.size() == 1) direct = a.ints[0];
    }
  }
  if (direct) return *direct;
  if (!t) {
    s.fail("input 'Remote' ('" + name + "') must be a constant (an initializer or a Constant "
           "node) so that the remote rank is known");
  }
  if (!t->ints.empty() && t->ints.size() == 1) return t->ints[0];
  s.fail("input 'Remote' ('" + name + "') must hold one integer rank, found a " +
         dtype_name(t->dtype) + " tensor of shape " + shape_string(t->shape));
}

CommOp parse_microsoft(const OpSite& s) {
  CommOp op;
  op.kind = kind_of(s.node.op_type);
  op.node_index = s.index;
  const int64_t world = s.plan.world_size;
  const auto& in = s.node.inputs;
  const auto& out = s.node.outputs;
  if (op.kind == CommKind::Send || op.kind == CommKind::Recv) {
    const bool send = op.kind == CommKind::Send;
    // Send(InputSignal, Remote, data...) -> OutputSignal; Recv(InputSignal, Remote) ->
    // (OutputSignal, data...). Several data tensors per call are outside what is paired.
    if (in.size() < 2 || in[1].empty()) s.fail("needs inputs InputSignal and Remote");
    const size_t data = send ? in.size() - 2 : (out.size() >= 1 ? out.size() - 1 : 0);
    if (data != 1) {
      throw Unsupported(s.where() + ": transfers " + std::to_string(data) +
                        " tensors; only one data tensor per Send/Recv is supported");
    }
    op.peer = constant_remote(s, in[1]);
    if (op.peer < 0 || op.peer >= world) {
      s.fail("remote rank " + std::to_string(op.peer) + " is outside the world (world_size " +
             std::to_string(world) + ")");
    }
    if (op.peer == s.rank) s.fail("rank " + std::to_string(op.peer) + " talks to itself");
    op.tag = s.int_attr("tag").value_or(0);
    op.data_input = send ? in[2] : "";
    op.output = send ? (out.empty() ? "" : out[0]) : out[1];
    if (send ? op.data_input.empty() : op.output.empty()) {
      s.fail(send ? "the data input is omitted" : "the data output is omitted");
    }
    return op;
  }
  if (in.size() != 1 || out.size() != 1 || in[0].empty() || out[0].empty()) {
    throw Unsupported(s.where() + ": has " + std::to_string(in.size()) + " inputs and " +
                      std::to_string(out.size()) + " outputs; only one tensor per collective "
                      "is supported");
  }
  for (int64_t r = 0; r < world; ++r) op.group.push_back(r);
  op.data_input = in[0];
  op.output = out[0];
  if (auto gs = s.int_attr("group_size"); gs && *gs != world) {
    s.fail("attribute 'group_size' = " + std::to_string(*gs) + ", but com.microsoft "
           "collectives span the whole world (world_size " + std::to_string(world) + ")");
  }
  if (op.kind == CommKind::AllGather) {
    const auto axis = s.int_attr("axis");
    if (!axis) s.fail("attribute 'axis' must be given");
    op.axis = *axis;
  }
  if (op.kind == CommKind::AllToAll) op.flatten = true;
  return op;
}

}  // namespace

bool is_comm_op(const Node& node) {
  // Any onnx_tv op counts, so that a misspelled one is reported as such, not as an unknown op.
  if (node.domain == kDomain) return true;
  return node.domain == kMicrosoft && is_microsoft_op(node.op_type);
}

CommOp parse_comm_op(const Plan& plan, int64_t rank, size_t node_index) {
  ONNX_TV_ASSERT(rank >= 0 && rank < plan.world_size, "rank outside the plan");
  const Graph& g = plan.program_of(rank);
  ONNX_TV_ASSERT(node_index < g.nodes.size(), "node index outside the graph");
  const OpSite site{plan, rank, g, g.nodes[node_index], node_index};
  ONNX_TV_ASSERT(is_comm_op(site.node), "parse_comm_op on a node that is no communication op");
  return site.node.domain == kDomain ? parse_onnx_tv(site) : parse_microsoft(site);
}

}  // namespace onnx_tv::ir
