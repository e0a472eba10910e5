// ModelProto -> ir::Graph. The checker of libonnx is deliberately not run: it rejects IR
// versions newer than the library knows, and exporters are routinely ahead of it. Instead
// everything this file converts is validated as it is read, model-local functions are inlined,
// and what onnx-tv does not use (doc strings, training info) is left alone.
#include "frontend/model_loader.h"

#include <filesystem>

#include <onnx/shape_inference/implementation.h>

#include "common/errors.h"
#include "common/memory_limit.h"
#include "frontend/onnx_convert.h"
#include "frontend/regular_file.h"

namespace onnx_tv::frontend {

namespace {

using detail::TensorSource;

// What every graph of one model shares: its file, opsets and where external data lives.
struct ModelContext {
  std::string file;
  std::string base_dir;
  std::map<std::string, int> opsets;
  int64_t ir_version = 0;
};

std::string normal_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// Names the node the way messages name it elsewhere ("MatMul node 'x'", "node #3").
std::string node_label(const onnx::NodeProto& n, int index) {
  std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                  : n.domain() + "." + n.op_type();
  if (!n.name().empty()) return op + " node '" + n.name() + "'";
  return op + " node #" + std::to_string(index) + " (unnamed)";
}

// `in` says where the value is declared (" in subgraph of ...", or "" for the main graph).
ir::ValueInfo convert_value_info(const onnx::ValueInfoProto& v, const ModelContext& m,
                                 const std::string& in) {
  ir::ValueInfo info;
  info.name = v.name();
  // Sequence, map and optional types have no tensor type; they keep Undefined and no shape,
  // and the layers that need a tensor there report it.
  if (!v.has_type() || !v.type().has_tensor_type()) return info;
  const auto& tt = v.type().tensor_type();
  info.dtype = ir::DType(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<ir::Dim> dims;
    std::vector<int64_t> sizes;  // the static ones, whose product must stay bounded
    for (const auto& d : tt.shape().dim()) {
      ir::Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          throw InputError(m.file + ": value '" + v.name() + "'" + in + ": dimension " +
                           std::to_string(dims.size()) + " is declared as " +
                           std::to_string(d.dim_value()) +
                           " (expected a size of 0 or more, or a symbolic name)");
        }
        dim.size = d.dim_value();
        sizes.push_back(d.dim_value());
      } else if (d.has_dim_param()) {
        dim.symbol = d.dim_param();
      }
      dims.push_back(std::move(dim));
    }
    if (!detail::bounded_element_count(sizes)) {
      std::string shape;
      for (const ir::Dim& d : dims) {
        shape += (shape.empty() ? "" : ", ") + (d.size ? std::to_string(*d.size) : d.symbol);
      }
      throw InputError(m.file + ": value '" + v.name() + "'" + in + ": declared shape [" + shape +
                       "] holds more than 2^48 elements (" + std::to_string(detail::kMaxElements) +
                       "), more than any tensor onnx-tv reads");
    }
    info.shape = std::move(dims);
  }
  return info;
}

ir::Graph convert_graph(const onnx::GraphProto& g, const ModelContext& m, const std::string& where);

// Old exporters leave AttributeProto.type unset; the field that holds a value says the kind.
onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  if (a.type() != A::UNDEFINED) return a.type();
  if (a.has_f()) return A::FLOAT;
  if (a.has_i()) return A::INT;
  if (a.has_s()) return A::STRING;
  if (a.has_t()) return A::TENSOR;
  if (a.has_g()) return A::GRAPH;
  if (a.has_sparse_tensor()) return A::SPARSE_TENSOR;
  if (a.floats_size()) return A::FLOATS;
  if (a.ints_size()) return A::INTS;
  if (a.strings_size()) return A::STRINGS;
  if (a.tensors_size()) return A::TENSORS;
  if (a.graphs_size()) return A::GRAPHS;
  return A::UNDEFINED;
}

ir::Attribute convert_attribute(const onnx::AttributeProto& a, const ModelContext& m,
                                const std::string& node_where) {
  using A = onnx::AttributeProto;
  ir::Attribute out;
  const std::string what = "attribute '" + a.name() + "' of " + node_where;
  const TensorSource src{m.file, m.base_dir, what};
  switch (attribute_type(a)) {
    case A::INT: out.kind = ir::Attribute::Kind::Int; out.i = a.i(); break;
    case A::FLOAT: out.kind = ir::Attribute::Kind::Float; out.f = a.f(); break;
    case A::STRING: out.kind = ir::Attribute::Kind::String; out.s = a.s(); break;
    case A::INTS:
      out.kind = ir::Attribute::Kind::Ints;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      out.kind = ir::Attribute::Kind::Floats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::STRINGS:
      out.kind = ir::Attribute::Kind::Strings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR:
      out.kind = ir::Attribute::Kind::Tensor;
      out.tensor = std::make_shared<ir::ConstTensor>(detail::convert_tensor(a.t(), src));
      break;
    case A::SPARSE_TENSOR:  // Constant's sparse_value: the dense tensor means the same
      out.kind = ir::Attribute::Kind::Tensor;
      out.tensor =
          std::make_shared<ir::ConstTensor>(detail::convert_sparse_tensor(a.sparse_tensor(), src));
      break;
    case A::GRAPH:
      out.kind = ir::Attribute::Kind::Graph;
      out.graph = std::make_shared<ir::Graph>(convert_graph(a.g(), m, "subgraph of " + what));
      break;
    default:
      throw Unsupported(m.file + ": " + what + ": attributes of kind " +
                        A::AttributeType_Name(attribute_type(a)) +
                        " are not supported (expected a number, string, tensor or graph)");
  }
  return out;
}

ir::Node convert_node(const onnx::NodeProto& n, int index, const ModelContext& m,
                      const std::string& where) {
  ir::Node node;
  node.name = n.name();
  node.op_type = n.op_type();
  node.domain = normal_domain(n.domain());
  const std::string label = node_label(n, index) + where;
  auto it = m.opsets.find(node.domain);
  if (it != m.opsets.end()) {
    node.opset = it->second;
  } else if (node.domain.empty()) {
    throw InputError(m.file + ": " + label +
                     " uses the default ONNX domain, but the model imports no opset for it");
  } else {
    node.opset = 1;  // custom domains (onnx_tv, com.microsoft) are often not imported
  }
  node.inputs.assign(n.input().begin(), n.input().end());
  node.outputs.assign(n.output().begin(), n.output().end());
  for (const auto& a : n.attribute()) {
    if (a.name().empty()) throw InputError(m.file + ": " + label + " has an unnamed attribute");
    node.attributes[a.name()] = convert_attribute(a, m, label);
  }
  return node;
}

ir::Graph convert_graph(const onnx::GraphProto& g, const ModelContext& m,
                        const std::string& where) {
  ir::Graph out;
  out.file = m.file;
  out.opsets = m.opsets;
  out.ir_version = m.ir_version;
  const std::string in = where.empty() ? "" : " in " + where;
  for (const auto& v : g.input()) out.inputs.push_back(convert_value_info(v, m, in));
  for (const auto& v : g.output()) out.outputs.push_back(convert_value_info(v, m, in));
  for (const auto& v : g.value_info()) out.value_info[v.name()] = convert_value_info(v, m, in);
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) throw InputError(m.file + ": an initializer" + in + " has no name");
    const TensorSource src{m.file, m.base_dir, "initializer '" + t.name() + "'" + in};
    if (!out.initializers.emplace(t.name(), detail::convert_tensor(t, src)).second) {
      throw InputError(m.file + ": initializer '" + t.name() + "'" + in + " is given twice");
    }
  }
  for (const auto& s : g.sparse_initializer()) {
    const std::string name = s.values().name();
    const TensorSource src{m.file, m.base_dir, "sparse initializer '" + name + "'" + in};
    if (name.empty()) throw InputError(m.file + ": a sparse initializer" + in + " has no name");
    if (!out.initializers.emplace(name, detail::convert_sparse_tensor(s, src)).second) {
      throw InputError(m.file + ": initializer '" + name + "'" + in + " is given twice");
    }
  }
  out.nodes.reserve(size_t(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) out.nodes.push_back(convert_node(g.node(i), i, m, in));
  return out;
}

ir::Graph convert_model(onnx::ModelProto& model, const std::string& name,
                        const LoadOptions& options) {
  if (!model.has_ir_version() || !model.has_graph()) {
    throw InputError(name + ": not an ONNX model (no " +
                     std::string(model.has_ir_version() ? "graph" : "ir_version") + " found)");
  }
  if (model.ir_version() < options.min_ir_version) {
    throw InputError(name + ": IR version " + std::to_string(model.ir_version()) +
                     " is too old (expected " + std::to_string(options.min_ir_version) +
                     " or later: older models import no opsets, so their ops have no version; "
                     "re-export with a newer exporter)");
  }
  detail::inline_local_functions(model, name);
  if (options.infer_shapes) {
    // Custom domains (onnx_tv, com.microsoft) have no schema here; inference skips them or
    // gives up, and either way the declared information is still there.
    try {
      onnx::ShapeInferenceOptions opts{/*check_type=*/false, /*error_mode=*/0,
                                       /*enable_data_propagation=*/false};
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::exception&) {
    }
  }
  ModelContext m;
  m.file = name;
  m.base_dir = std::filesystem::path(name).parent_path().string();
  m.ir_version = model.ir_version();
  for (const auto& op : model.opset_import()) {
    m.opsets[normal_domain(op.domain())] = int(op.version());
  }
  ir::Graph g = convert_graph(model.graph(), m, "");
  for (const auto& kv : model.metadata_props()) g.metadata[kv.key()] = kv.value();
  return g;
}

}  // namespace

ir::Graph parse_model(const std::string& bytes, const std::string& name,
                      const LoadOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    throw InputError(name + ": not an ONNX model (the file is not a valid ModelProto)");
  }
  return convert_model(model, name, options);
}

ir::Graph parse_model(const std::string& bytes, const std::string& name) {
  return parse_model(bytes, name, LoadOptions{});
}

ir::Graph load_model(const std::string& path, const LoadOptions& options) {
  detail::RegularFile file(path, "an ONNX model file");
  const std::string bytes = file.read_all(
      detail::kMaxModelBytes,
      "protobuf reads at most 2 GiB; larger models keep their tensors as external data");
  check_memory_now(options.memory_bytes, "loading " + path);
  ir::Graph g = parse_model(bytes, path, options);
  check_memory_now(options.memory_bytes, "loading " + path);
  return g;
}

ir::Graph load_model(const std::string& path) { return load_model(path, LoadOptions{}); }

}  // namespace onnx_tv::frontend
