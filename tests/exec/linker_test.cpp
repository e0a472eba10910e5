// link_plan: one step per rank node and per matched collective or Send/Recv pair, in an order
// where every step follows the steps making its inputs and each rank keeps its file's order
// where dataflow allows; a cycle across ranks is the plan's error, naming a node on it.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/errors.h"
#include "exec/linker.h"

namespace onnx_tv::exec {
namespace {

ir::Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              const std::string& name, const std::string& domain = "") {
  ir::Node n;
  n.op_type = op;
  n.domain = domain;
  n.opset = domain.empty() ? 17 : 1;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ir::Node p2p(const std::string& op, const std::string& in, const std::string& out, int64_t peer,
             const std::string& name) {
  ir::Node n = node(op, in.empty() ? std::vector<std::string>{} : std::vector<std::string>{in},
                    out.empty() ? std::vector<std::string>{} : std::vector<std::string>{out},
                    name, "onnx_tv");
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Int;
  a.i = peer;
  n.attributes["peer"] = a;
  return n;
}

ir::Plan plan_of(std::vector<std::vector<ir::Node>> programs) {
  ir::Plan p;
  p.dir = "shards";
  p.world_size = int64_t(programs.size());
  for (size_t r = 0; r < programs.size(); ++r) {
    auto g = std::make_shared<ir::Graph>();
    g->file = "shards/rank" + std::to_string(r) + ".onnx";
    g->opsets = {{"", 17}, {"onnx_tv", 1}};
    g->inputs.push_back(ir::ValueInfo{"x", ir::DType::Float, std::vector<ir::Dim>{}});
    g->nodes = std::move(programs[r]);
    p.programs.push_back(g);
    p.rank_program.push_back(r);
  }
  return p;
}

// Rank 0: a = f(x); send a; c = g(x). Rank 1: b = recv; d = h(b).
ir::Plan pipeline() {
  return plan_of({{node("Neg", {"x"}, {"a"}, "f"), p2p("Send", "a", "", 1, "send"),
                   node("Neg", {"x"}, {"c"}, "g")},
                  {p2p("Recv", "", "b", 0, "recv"), node("Neg", {"b"}, {"d"}, "h")}});
}

std::string name_of(const ir::Plan& p, const Step::Member& m) {
  return p.program_of(m.rank).nodes[m.node_index].name;
}

TEST(Linker, EveryStepFollowsWhatMakesItsInputs) {
  const ir::Plan p = pipeline();
  const LinkedPlan l = link_plan(p);
  ASSERT_EQ(l.steps.size(), 4u);  // f, the Send/Recv pair, g, h
  EXPECT_EQ(l.p2p, 1);
  std::map<std::string, size_t> at;
  for (size_t s = 0; s < l.steps.size(); ++s)
    for (const auto& m : l.steps[s].members) at[name_of(p, m)] = s;
  EXPECT_LT(at.at("f"), at.at("send"));
  EXPECT_EQ(at.at("send"), at.at("recv"));
  EXPECT_LT(at.at("recv"), at.at("h"));
  const Step& pair = l.steps[at.at("send")];
  ASSERT_EQ(pair.kind, Step::Kind::P2P);
  ASSERT_EQ(pair.members.size(), 2u);
  EXPECT_EQ(pair.members[0].rank, 0);  // the Send first, then the Recv
  EXPECT_EQ(pair.members[1].rank, 1);
}

TEST(Linker, KeepsFileOrderWhereDataflowAllows) {
  // Rank 0's two plain nodes in its file's order whatever is linked between them, over
  // several plans that differ in how many other ranks' steps come first.
  for (int extra = 0; extra < 3; ++extra) {
    ir::Plan p = pipeline();
    std::vector<ir::Node> more;
    for (int k = 0; k < extra; ++k) more.push_back(node("Neg", {"x"}, {"e" + std::to_string(k)}, "e"));
    auto g = std::make_shared<ir::Graph>(p.program_of(1));
    g->nodes.insert(g->nodes.begin(), more.begin(), more.end());
    p.programs[1] = g;
    const LinkedPlan l = link_plan(p);
    std::vector<std::string> rank0;
    for (const Step& s : l.steps)
      if (s.kind == Step::Kind::Node && s.members[0].rank == 0) rank0.push_back(name_of(p, s.members[0]));
    EXPECT_EQ(rank0, (std::vector<std::string>{"f", "g"})) << extra;
  }
}

TEST(Linker, ACycleAcrossRanksIsThePlansError) {
  // Each rank receives before it sends what the other waits for.
  const ir::Plan p =
      plan_of({{p2p("Recv", "", "a", 1, "recv0"), p2p("Send", "a", "", 1, "send0")},
               {p2p("Recv", "", "b", 0, "recv1"), p2p("Send", "b", "", 0, "send1")}});
  try {
    link_plan(p);
    FAIL() << "a cycle was linked";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cycle across ranks"), std::string::npos) << m;
    EXPECT_NE(m.find("shards/rank"), std::string::npos) << m;
  }
}

// Many steps, permuted far from file order: every rank's steps still come out in dataflow
// order, each exactly once (the steps are put in order where they are).
TEST(Linker, ALongChainAcrossRanksComesOutWhole) {
  const int ranks = 4, hops = 50;
  std::vector<std::vector<ir::Node>> progs(ranks);
  // A value passes rank 0 -> 1 -> 2 -> 3 -> 0 ... hops times; each rank also has local work.
  std::string v = "x";
  for (int h = 0; h < hops; ++h) {
    const int from = h % ranks, to = (h + 1) % ranks;
    const std::string made = "v" + std::to_string(h), got = "w" + std::to_string(h);
    progs[from].push_back(node("Neg", {v}, {made}, "neg" + std::to_string(h)));
    progs[from].push_back(p2p("Send", made, "", to, "send" + std::to_string(h)));
    progs[to].push_back(p2p("Recv", "", got, from, "recv" + std::to_string(h)));
    v = got;
  }
  const ir::Plan p = plan_of(progs);
  const LinkedPlan l = link_plan(p);
  EXPECT_EQ(l.steps.size(), size_t(hops * 2));  // each Neg, each pair
  std::map<std::string, size_t> at;
  for (size_t s = 0; s < l.steps.size(); ++s)
    for (const auto& m : l.steps[s].members) EXPECT_TRUE(at.emplace(name_of(p, m), s).second);
  for (int h = 1; h < hops; ++h)
    EXPECT_LT(at.at("recv" + std::to_string(h - 1)), at.at("neg" + std::to_string(h))) << h;
}

}  // namespace
}  // namespace onnx_tv::exec
