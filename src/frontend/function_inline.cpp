// Inlining of model-local functions. Exporters that keep the module hierarchy (torch's dynamo
// exporter) call one function per module; expanding them here keeps the op registry, the
// evaluator and the messages about plain ONNX ops, with node names that still show the path
// of calls ("layer0/attn/MatMul").
#include <map>

#include "common/errors.h"
#include "frontend/onnx_convert.h"

namespace onnx_tv::frontend::detail {

namespace {

// Deep enough for any real module hierarchy; ONNX forbids recursion, so a chain this long
// means a function calls itself.
constexpr int kMaxDepth = 64;

// The most nodes a model may expand to. Each level of calls multiplies: a function calling
// another twice, thirty levels deep, is a file of a few kilobytes and 2^30 nodes once inlined.
// A model of a few hundred layers has well under a million.
constexpr int64_t kMaxInlinedNodes = 1'000'000;

using FunctionMap = std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*>;

std::string domain_key(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// Renames value references inside a nested graph (If/Loop bodies) that name values of the
// enclosing body; names the nested graph defines itself are not in `names` and stay.
void rename_in_graph(onnx::GraphProto& g, const std::map<std::string, std::string>& names) {
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      auto it = names.find(in);
      if (it != names.end()) in = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_in_graph(*a.mutable_g(), names);
      for (auto& sub : *a.mutable_graphs()) rename_in_graph(sub, names);
    }
  }
}

class Inliner {
 public:
  Inliner(const FunctionMap& functions, const std::string& file)
      : functions_(functions), file_(file) {}

  // Appends `node` to `out`, expanded when it calls a local function.
  void emit(const onnx::NodeProto& node, int depth,
            google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    auto it = functions_.find({domain_key(node.domain()), node.op_type()});
    if (it == functions_.end()) {
      if (++emitted_ > kMaxInlinedNodes) {
        throw Unsupported(file_ + ": its local functions expand to more than " +
                          std::to_string(kMaxInlinedNodes) + " nodes once inlined (calls "
                          "nested in calls multiply), more than onnx-tv reads");
      }
      *out.Add() = node;
      return;
    }
    const onnx::FunctionProto& f = *it->second;
    const std::string call = node.op_type() + " call '" + node.name() + "'";
    if (depth >= kMaxDepth) {
      throw InputError(file_ + ": " + call + ": local function '" + f.name() +
                       "' calls itself (ONNX functions may not recurse)");
    }
    if (node.input_size() > f.input_size() || node.output_size() > f.output_size()) {
      throw InputError(file_ + ": " + call + " passes " + std::to_string(node.input_size()) +
                       " inputs and " + std::to_string(node.output_size()) +
                       " outputs, but function '" + f.name() + "' takes " +
                       std::to_string(f.input_size()) + " and gives " +
                       std::to_string(f.output_size()));
    }
    // Formal parameters become the caller's values; everything else the body defines gets a
    // name unique to this call. Nested calls already carry their caller's scope in their name.
    const std::string scope =
        (node.name().empty() ? f.name() + "#" + std::to_string(calls_++) : node.name()) + "/";
    std::map<std::string, std::string> names;
    for (int i = 0; i < f.input_size(); ++i) {
      names[f.input(i)] = i < node.input_size() ? node.input(i) : "";
    }
    for (int i = 0; i < f.output_size(); ++i) {
      names[f.output(i)] = i < node.output_size() ? node.output(i) : "";
    }
    for (const auto& body : f.node()) {
      for (const auto& o : body.output()) {
        if (!o.empty() && !names.count(o)) names[o] = scope + o;
      }
    }
    std::map<std::string, const onnx::AttributeProto*> given;
    for (const auto& a : node.attribute()) given[a.name()] = &a;

    for (const auto& body : f.node()) {
      onnx::NodeProto n = body;
      n.set_name(scope + (body.name().empty() ? body.op_type() : body.name()));
      for (auto& in : *n.mutable_input()) {
        if (in.empty()) continue;
        auto r = names.find(in);
        if (r != names.end()) in = r->second;
      }
      for (auto& o : *n.mutable_output()) {
        auto r = names.find(o);
        if (r != names.end()) o = r->second;
      }
      // Attribute references take the caller's value; without one the op's default applies.
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
      for (const auto& a : body.attribute()) {
        if (a.ref_attr_name().empty()) {
          onnx::AttributeProto copy = a;
          if (copy.has_g()) rename_in_graph(*copy.mutable_g(), names);
          for (auto& sub : *copy.mutable_graphs()) rename_in_graph(sub, names);
          *attrs.Add() = std::move(copy);
          continue;
        }
        auto g = given.find(a.ref_attr_name());
        if (g == given.end()) continue;
        onnx::AttributeProto copy = *g->second;
        copy.set_name(a.name());
        *attrs.Add() = std::move(copy);
      }
      *n.mutable_attribute() = std::move(attrs);
      emit(n, depth + 1, out);
    }
  }

 private:
  const FunctionMap& functions_;
  std::string file_;
  int64_t calls_ = 0;
  int64_t emitted_ = 0;  // nodes written out, over every graph of the model
};

void inline_graph(onnx::GraphProto& g, Inliner& inliner) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  for (const auto& n : g.node()) inliner.emit(n, 0, out);
  for (auto& n : out) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) inline_graph(*a.mutable_g(), inliner);
      for (auto& sub : *a.mutable_graphs()) inline_graph(sub, inliner);
    }
  }
  *g.mutable_node() = std::move(out);
}

}  // namespace

void inline_local_functions(onnx::ModelProto& model, const std::string& file) {
  if (model.functions_size() == 0) return;
  FunctionMap functions;
  for (const auto& f : model.functions()) {
    functions[{domain_key(f.domain()), f.name()}] = &f;
  }
  Inliner inliner(functions, file);
  inline_graph(*model.mutable_graph(), inliner);
}

}  // namespace onnx_tv::frontend::detail
