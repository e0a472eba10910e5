// Harness (b): plan.json. The input is the text of plan.json in a shards folder whose programs
// are fixed: rank0.onnx .. rank3.onnx and stage.onnx (the latter with bindings in its
// metadata), each with collectives in the rank-generic forms (group_axes, peer_axis), so that
// the plan's world_size, mesh, ranks/programs and bindings are read, and then resolved the way
// the check uses them: every binding's region against a spec shape, every communication op
// against the mesh.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>

#include "frontend/plan.h"
#include "harness.h"
#include "ir/comm_parse.h"
#include "scratch_dir.h"

namespace onnx_tv::fuzz {
namespace {

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
               const std::string& name) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 2; ++i) tt->mutable_shape()->add_dim()->set_dim_value(4);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& domain, const std::string& op,
                          std::initializer_list<const char*> in,
                          std::initializer_list<const char*> out) {
  onnx::NodeProto* n = g->add_node();
  n->set_domain(domain);
  n->set_op_type(op);
  for (const char* i : in) n->add_input(i);
  for (const char* o : out) n->add_output(o);
  return n;
}

void set_attribute(onnx::NodeProto* n, const std::string& name, const std::string& s) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(s);
}

void set_attribute(onnx::NodeProto* n, const std::string& name, int64_t i) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(i);
}

// x [4,4] -> AllReduce over mesh axis "tp" -> Send to the next "pp" stage, Recv from the
// previous one, add; a com.microsoft AllReduce over the whole world on the side.
std::string program(const std::string& metadata) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  for (auto [domain, version] : {std::pair{"", 17}, {"onnx_tv", 1}, {"com.microsoft", 1}}) {
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x");
  add_value(g->mutable_output(), "y");
  add_value(g->mutable_output(), "c");
  add_value(g->mutable_value_info(), "b");
  onnx::AttributeProto* axes = add_node(g, "onnx_tv", "AllReduce", {"x"}, {"a"})->add_attribute();
  axes->set_name("group_axes");
  axes->set_type(onnx::AttributeProto::STRINGS);
  axes->add_strings("tp");
  onnx::NodeProto* send = add_node(g, "onnx_tv", "Send", {"a"}, {});
  set_attribute(send, "peer_axis", "pp");
  set_attribute(send, "peer_offset", 1);
  onnx::NodeProto* recv = add_node(g, "onnx_tv", "Recv", {}, {"b"});
  set_attribute(recv, "peer_axis", "pp");
  set_attribute(recv, "peer_offset", -1);
  add_node(g, "", "Add", {"a", "b"}, {"y"});
  add_node(g, "com.microsoft", "AllReduce", {"x"}, {"c"});
  if (!metadata.empty()) {
    auto* p = m.add_metadata_props();
    p->set_key("onnx_tv.bindings");
    p->set_value(metadata);
  }
  return m.SerializeAsString();
}

const ScratchDir& shards() {
  static const ScratchDir dir;
  static const bool written = [] {
    for (int r = 0; r < 4; ++r) dir.write("rank" + std::to_string(r) + ".onnx", program(""));
    dir.write("stage.onnx", program(R"([{"value": "x", "spec": "x", "slice": [[0, 4], null]},
                                        {"value": "y", "spec": "y", "partial": "sum"}])"));
    return true;
  }();
  (void)written;
  return dir;
}

// Resolving touches every binding and every rank; a plan may have a million of each, which is
// fine for the loader but not for a fuzzer's few milliseconds per input.
constexpr size_t kResolved = 64;

void resolve(const ir::Plan& plan) {
  for (size_t i = 0; i < plan.bindings.size() && i < kResolved; ++i) {
    const ir::Binding& b = plan.bindings[i];
    ir::binding_key(b);
    expect_clean([&] { ir::resolve_region(b, plan.mesh, {8, 8}); });
  }
  for (int64_t r = 0; r < plan.world_size && r < int64_t(kResolved); ++r) {
    const ir::Graph& g = plan.program_of(r);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      if (!ir::is_comm_op(g.nodes[n])) continue;
      expect_clean([&] { ir::parse_comm_op(plan, r, n); });
    }
  }
}

}  // namespace
}  // namespace onnx_tv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnx_tv;
  const fuzz::ScratchDir& dir = fuzz::shards();
  dir.write("plan.json", std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean([&] { fuzz::resolve(frontend::load_plan(dir.path().string())); });
  return 0;
}
