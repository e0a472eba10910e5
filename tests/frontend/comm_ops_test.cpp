// is_comm_op / parse_comm_op: onnx_tv collectives and Send/Recv with explicit and mesh-relative
// ranks, com.microsoft's collectives and training Send/Recv, and their input errors.
#include <functional>

#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "ir/comm_parse.h"
#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

using ir::is_comm_op;
using ir::Mesh;
using ir::parse_comm_op;
using ir::Plan;

using Setup = std::function<void(onnx::ModelProto&, onnx::NodeProto*)>;

// A program x -> op -> y whose op (node 0, named "comm") is configured by `setup`.
onnx::ModelProto comm_model(const std::string& op, const std::string& domain,
                            const Setup& setup, std::vector<std::string> inputs = {"x"},
                            std::vector<std::string> outputs = {"y"}) {
  onnx::ModelProto m = make_model();
  import_domain(m, domain);
  add_input(m, "x", {4});
  add_output(m, "y", {4});
  onnx::NodeProto* n = add_node(m, op, inputs, outputs, domain, "comm");
  if (setup) setup(m, n);
  return m;
}

// Every rank runs `m`; the graph is named prog.onnx in messages.
Plan plan_of(int64_t world, std::optional<Mesh> mesh, const onnx::ModelProto& m) {
  Plan p;
  p.dir = "shards";
  p.world_size = world;
  p.mesh = std::move(mesh);
  p.programs.push_back(
      std::make_shared<const ir::Graph>(parse_model(m.SerializeAsString(), "shards/prog.onnx")));
  p.rank_program.assign(size_t(world), 0);
  return p;
}

Mesh mesh_222() { return Mesh{{"dp", "pp", "tp"}, {2, 2, 2}}; }

ir::CommOp parse(const Plan& p, int64_t rank) { return parse_comm_op(p, rank, 0); }

TEST(CommOps, IsCommOp) {
  ir::Node n;
  n.op_type = "AllReduce";
  EXPECT_FALSE(is_comm_op(n));
  n.domain = "onnx_tv";
  EXPECT_TRUE(is_comm_op(n));
  n.op_type = "AllRedcue";  // reported by parse_comm_op, not silently taken for a plain op
  EXPECT_TRUE(is_comm_op(n));
  n.domain = "com.microsoft";
  EXPECT_FALSE(is_comm_op(n));
  for (const char* op : {"AllReduce", "AllGather", "AllToAll", "Send", "Recv"}) {
    n.op_type = op;
    EXPECT_TRUE(is_comm_op(n)) << op;
  }
  n.op_type = "FusedMatMul";
  EXPECT_FALSE(is_comm_op(n));
}

TEST(CommOps, CollectivesWithExplicitGroups) {
  auto m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {3, 1});
    set_string(n, "reduce", "max");
    set_string(n, "key", "grad_sync");
  });
  ir::CommOp op = parse(plan_of(4, std::nullopt, m), 1);
  EXPECT_EQ(op.kind, ir::CommKind::AllReduce);
  EXPECT_EQ(op.group, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(op.reduce, ir::ReduceOp::Max);
  EXPECT_EQ(op.key, "grad_sync");
  EXPECT_EQ(op.data_input, "x");
  EXPECT_EQ(op.output, "y");
  EXPECT_EQ(op.node_index, 0u);

  m = comm_model("ReduceScatter", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1});
    set_int(n, "axis", -1);
  });
  op = parse(plan_of(2, std::nullopt, m), 0);
  EXPECT_EQ(op.kind, ir::CommKind::ReduceScatter);
  EXPECT_EQ(op.reduce, ir::ReduceOp::Sum);
  EXPECT_EQ(op.axis, -1);

  m = comm_model("AllToAll", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1});
    set_int(n, "split_axis", 1);
    set_int(n, "concat_axis", 0);
  });
  op = parse(plan_of(2, std::nullopt, m), 1);
  EXPECT_EQ(op.split_axis, 1);
  EXPECT_EQ(op.concat_axis, 0);
  EXPECT_FALSE(op.flatten);

  m = comm_model("Broadcast", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1, 2});
    set_int(n, "root", 2);
  });
  EXPECT_EQ(parse(plan_of(3, std::nullopt, m), 0).root, 2);
}

TEST(CommOps, GroupAxesAreResolvedOnTheMesh) {
  auto with_axes = [](std::vector<std::string> axes) {
    return comm_model("AllGather", "onnx_tv", [axes](auto&, auto* n) {
      set_strings(n, "group_axes", axes);
      set_int(n, "axis", 1);
    });
  };
  // Rank 5 has coordinates (dp 1, pp 0, tp 1).
  ir::CommOp op = parse(plan_of(8, mesh_222(), with_axes({"tp"})), 5);
  EXPECT_EQ(op.group, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(op.axis, 1);
  op = parse(plan_of(8, mesh_222(), with_axes({"dp", "tp"})), 5);
  EXPECT_EQ(op.group, (std::vector<int64_t>{0, 1, 4, 5}));
  op = parse(plan_of(8, mesh_222(), with_axes({"tp", "dp"})), 5);
  EXPECT_EQ(op.group, (std::vector<int64_t>{0, 4, 1, 5}));
  op = parse(plan_of(8, mesh_222(), with_axes({"dp"})), 2);
  EXPECT_EQ(op.group, (std::vector<int64_t>{2, 6}));
}

TEST(CommOps, SendRecvWithPeersAndPeerAxes) {
  auto send = comm_model("Send", "onnx_tv", [](auto&, auto* n) { set_int(n, "peer", 3); },
                         {"x"}, {});
  ir::CommOp op = parse(plan_of(4, std::nullopt, send), 0);
  EXPECT_EQ(op.kind, ir::CommKind::Send);
  EXPECT_EQ(op.peer, 3);
  EXPECT_EQ(op.tag, 0);
  EXPECT_EQ(op.data_input, "x");
  EXPECT_EQ(op.output, "");

  auto recv = comm_model("Recv", "onnx_tv", [](auto&, auto* n) {
    set_string(n, "peer_axis", "pp");
    set_int(n, "peer_offset", -1);
    set_int(n, "tag", 7);
  }, {}, {"y"});
  // Rank 2 is (dp 0, pp 1, tp 0); its pp - 1 neighbour is rank 0.
  op = parse(plan_of(8, mesh_222(), recv), 2);
  EXPECT_EQ(op.kind, ir::CommKind::Recv);
  EXPECT_EQ(op.peer, 0);
  EXPECT_EQ(op.tag, 7);
  EXPECT_EQ(op.output, "y");
  EXPECT_EQ(op.data_input, "");
  EXPECT_EQ(parse(plan_of(8, mesh_222(), recv), 7).peer, 5);
}

TEST(CommOps, MicrosoftCollectivesSpanTheWorld) {
  auto ar = comm_model("AllReduce", "com.microsoft", nullptr);
  ir::CommOp op = parse(plan_of(3, std::nullopt, ar), 2);
  EXPECT_EQ(op.kind, ir::CommKind::AllReduce);
  EXPECT_EQ(op.group, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(op.reduce, ir::ReduceOp::Sum);

  auto ag = comm_model("AllGather", "com.microsoft", [](auto&, auto* n) {
    set_int(n, "group_size", 2);
    set_int(n, "axis", 1);
  });
  op = parse(plan_of(2, std::nullopt, ag), 0);
  EXPECT_EQ(op.kind, ir::CommKind::AllGather);
  EXPECT_EQ(op.axis, 1);

  auto a2a = comm_model("AllToAll", "com.microsoft",
                        [](auto&, auto* n) { set_int(n, "group_size", 2); });
  op = parse(plan_of(2, std::nullopt, a2a), 1);
  EXPECT_EQ(op.kind, ir::CommKind::AllToAll);
  EXPECT_TRUE(op.flatten);
  EXPECT_EQ(op.group, (std::vector<int64_t>{0, 1}));
}

TEST(CommOps, MicrosoftSendRecvReadTheRemoteConstant) {
  auto send = comm_model("Send", "com.microsoft", [](auto& m, auto* n) {
    add_int64_initializer(m, "remote", {}, {1});
    set_int(n, "tag", 4);
  }, {"signal", "remote", "x"}, {"sent"});
  ir::CommOp op = parse(plan_of(2, std::nullopt, send), 0);
  EXPECT_EQ(op.kind, ir::CommKind::Send);
  EXPECT_EQ(op.peer, 1);
  EXPECT_EQ(op.tag, 4);
  EXPECT_EQ(op.data_input, "x");
  EXPECT_EQ(op.output, "sent");

  // Remote from a Constant node placed before the Recv.
  onnx::ModelProto recv = make_model();
  import_domain(recv, "com.microsoft");
  add_input(recv, "signal", {}, onnx::TensorProto::BOOL);
  add_output(recv, "y", {4});
  auto* c = add_node(recv, "Constant", {}, {"remote"});
  auto* v = c->add_attribute();
  v->set_name("value");
  v->set_type(onnx::AttributeProto::TENSOR);
  v->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  v->mutable_t()->add_int64_data(0);
  add_node(recv, "Recv", {"signal", "remote"}, {"done", "y"}, "com.microsoft", "recv");
  op = parse_comm_op(plan_of(2, std::nullopt, recv), 1, 1);
  EXPECT_EQ(op.kind, ir::CommKind::Recv);
  EXPECT_EQ(op.peer, 0);
  EXPECT_EQ(op.output, "y");
  EXPECT_EQ(op.node_index, 1u);
}

// ---- errors --------------------------------------------------------------------------------

TEST(CommOpsErrors, RankOutsideWorldOrGroup) {
  auto m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) { set_ints(n, "group", {0, 9}); });
  expect_input_error([&] { parse(plan_of(4, std::nullopt, m), 0); },
                     {"shards/prog.onnx", "rank 0", "AllReduce node 'comm'", "'group'", "rank 9",
                      "outside the world", "world_size 4"});
  m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) { set_ints(n, "group", {0, 1}); });
  expect_input_error([&] { parse(plan_of(4, std::nullopt, m), 2); },
                     {"shards/prog.onnx", "rank 2", "not in its group"});
  m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) { set_ints(n, "group", {0, 0}); });
  expect_input_error([&] { parse(plan_of(4, std::nullopt, m), 0); }, {"listed twice"});
  m = comm_model("Send", "onnx_tv", [](auto&, auto* n) { set_int(n, "peer", 4); }, {"x"}, {});
  expect_input_error([&] { parse(plan_of(4, std::nullopt, m), 0); },
                     {"shards/prog.onnx", "'peer'", "rank 4", "outside the world"});
}

TEST(CommOpsErrors, PeerLeavesTheMesh) {
  auto m = comm_model("Send", "onnx_tv", [](auto&, auto* n) {
    set_string(n, "peer_axis", "pp");
    set_int(n, "peer_offset", 1);
  }, {"x"}, {});
  EXPECT_EQ(parse(plan_of(8, mesh_222(), m), 1).peer, 3);
  // Rank 3 is (dp 0, pp 1, tp 1): pp + 1 is off the mesh.
  expect_input_error([&] { parse(plan_of(8, mesh_222(), m), 3); },
                     {"shards/prog.onnx", "rank 3", "Send node 'comm'", "peer_offset 1",
                      "'pp'", "leaves the mesh"});
  auto bad_axis = comm_model("Recv", "onnx_tv", [](auto&, auto* n) {
    set_string(n, "peer_axis", "ep");
    set_int(n, "peer_offset", 1);
  }, {}, {"y"});
  expect_input_error([&] { parse(plan_of(8, mesh_222(), bad_axis), 0); },
                     {"'ep'", "not a mesh axis"});
  expect_input_error([&] { parse(plan_of(8, std::nullopt, bad_axis), 0); }, {"mesh"});
}

TEST(CommOpsErrors, MalformedOnnxTvOps) {
  auto m = comm_model("AllReduce", "onnx_tv", nullptr);
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); },
                     {"shards/prog.onnx", "'group'", "'group_axes'"});
  m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1});
    set_ints(n, "gruop", {0, 1});
  });
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); },
                     {"unknown attribute 'gruop'"});
  m = comm_model("AllReduce", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1});
    set_string(n, "reduce", "prod");
  });
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); }, {"'reduce'", "'prod'"});
  m = comm_model("AllRedcue", "onnx_tv", nullptr);
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); },
                     {"AllRedcue", "unknown communication op"});
  m = comm_model("Broadcast", "onnx_tv", [](auto&, auto* n) {
    set_ints(n, "group", {0, 1});
    set_int(n, "root", 2);
  });
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); }, {"'root' = 2"});
  m = comm_model("AllGather", "onnx_tv", [](auto&, auto* n) {
    set_strings(n, "group_axes", {"sp"});
  });
  expect_input_error([&] { parse(plan_of(8, mesh_222(), m), 0); }, {"'sp'", "not a mesh axis"});
  m = comm_model("Send", "onnx_tv", [](auto&, auto* n) { set_int(n, "peer", 0); }, {"x"}, {});
  expect_input_error([&] { parse(plan_of(2, std::nullopt, m), 0); }, {"itself"});
}

TEST(CommOpsErrors, MalformedMicrosoftOps) {
  auto ag = comm_model("AllGather", "com.microsoft",
                       [](auto&, auto* n) { set_int(n, "group_size", 2); });
  expect_input_error([&] { parse(plan_of(2, std::nullopt, ag), 0); },
                     {"shards/prog.onnx", "com.microsoft.AllGather node 'comm'", "'axis'"});
  auto ar = comm_model("AllReduce", "com.microsoft",
                       [](auto&, auto* n) { set_int(n, "group_size", 4); });
  expect_input_error([&] { parse(plan_of(2, std::nullopt, ar), 0); },
                     {"'group_size' = 4", "world_size 2"});
  auto send = comm_model("Send", "com.microsoft", nullptr, {"signal", "x", "x"}, {"sent"});
  expect_input_error([&] { parse(plan_of(2, std::nullopt, send), 0); },
                     {"shards/prog.onnx", "Send node 'comm'", "'Remote'", "constant"});
  auto far = comm_model("Send", "com.microsoft", [](auto& m, auto*) {
    add_int64_initializer(m, "remote", {1}, {5});
  }, {"signal", "remote", "x"}, {"sent"});
  expect_input_error([&] { parse(plan_of(2, std::nullopt, far), 0); },
                     {"remote rank 5", "outside the world"});
}

// The whole path: a plan folder whose one SPMD program uses mesh-relative ops.
TEST(CommOps, SpmdProgramFromAPlanFolder) {
  TempDir dir;
  onnx::ModelProto m = comm_model("AllReduce", "onnx_tv",
                                  [](auto&, auto* n) { set_strings(n, "group_axes", {"tp"}); });
  write_model(dir.file("tp.onnx"), m);
  write_text(dir.file("plan.json"), R"({"format": "onnx-tv.plan/1", "world_size": 4,
      "mesh": {"axes": ["dp", "tp"], "shape": [2, 2]},
      "programs": [{"file": "tp.onnx", "ranks": {}}]})");
  Plan plan = load_plan(dir.path());
  EXPECT_EQ(parse(plan, 0).group, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(parse(plan, 3).group, (std::vector<int64_t>{2, 3}));
}

}  // namespace
}  // namespace onnx_tv::frontend::test
