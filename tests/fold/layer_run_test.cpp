// Finding the layers a deep model repeats (fold/layer_run.h): a run is found whatever the
// layers' names, and ends at a layer that differs in one constant, attribute or shape.
#include <gtest/gtest.h>

#include <string>

#include "fold/layer_run.h"
#include "fold/param_labels.h"

namespace onnx_tv::fold {
namespace {

ir::Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  ir::Node n;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ir::Attribute float_attribute(double f) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Float;
  a.f = f;
  return a;
}

struct Model {
  ir::Graph g;
  GraphParams params;

  std::vector<NodeStage> stages() const {
    return node_stages(g, label_graph(g, params.of, params.count), params.count);
  }
  std::optional<LayerRun> run() const { return find_graph_run(g, stages(), params, 3); }
  ParamTexts texts(const LayerRun& r) const { return param_texts(g, stages(), params, &r); }
};

// x -> `layers` times: LeakyRelu(MatMul(h, W) + b) * c, each layer with its own constant c
// (a Constant node, or an initializer) -> ReduceSum. Parameters: x, then W and b per layer.
struct Options {
  int layers = 10;
  int odd_layer = -1;  // this layer differs in:
  double odd_constant = 0.5;
  double odd_alpha = 0.1;
  int64_t odd_width = 4;
  bool initializer_constants = false;
};

Model chain(const Options& o) {
  Model m;
  auto param = [&](const std::string& name) {
    m.g.inputs.push_back({name, ir::DType::Float, std::nullopt});
    m.params.of[name] = m.params.count++;
  };
  param("x");
  std::string h = "x";
  for (int j = 0; j < o.layers; ++j) {
    const std::string s = std::to_string(j);
    const bool odd = j == o.odd_layer;
    param("W" + s);
    param("b" + s);
    m.g.nodes.push_back(node("MatMul", {h, "W" + s}, {"m" + s}));
    m.g.nodes.push_back(node("Add", {"m" + s, "b" + s}, {"a" + s}));
    ir::ValueInfo vi{"a" + s, ir::DType::Float, std::vector<ir::Dim>{{4, ""}, {odd ? o.odd_width : 4, ""}}};
    m.g.value_info[vi.name] = vi;
    ir::Node relu = node("LeakyRelu", {"a" + s}, {"r" + s});
    relu.attributes["alpha"] = float_attribute(odd ? o.odd_alpha : 0.1);
    m.g.nodes.push_back(relu);
    ir::ConstTensor c{ir::DType::Float, {}, {odd ? o.odd_constant : 0.5}, {}, false};
    const std::string cname = "layers." + s + ".scale";  // a name of its own in every layer
    if (o.initializer_constants) {
      m.g.initializers[cname] = c;
    } else {
      ir::Node k = node("Constant", {}, {cname});
      k.attributes["value"].kind = ir::Attribute::Kind::Tensor;
      k.attributes["value"].tensor = std::make_shared<ir::ConstTensor>(c);
      m.g.nodes.push_back(k);
    }
    m.g.nodes.push_back(node("Mul", {"r" + s, cname}, {"h" + s}));
    h = "h" + s;
  }
  m.g.nodes.push_back(node("ReduceSum", {h}, {"loss"}));
  m.g.outputs.push_back({"loss", ir::DType::Float, std::nullopt});
  return m;
}

// Stages are cut where parameters are read: W_j's stage is the MatMul, b_j's the Add, LeakyRelu
// and Mul, so the run's layers are b_j's stage then W_{j+1}'s (the first W reads x, the last b
// is where the last parameter is read both ways): nine, whatever each layer's constant is
// called.
TEST(LayerRun, FoundWhateverTheNames) {
  for (bool initializers : {false, true}) {
    Options o;
    o.initializer_constants = initializers;
    const Model m = chain(o);
    const auto run = m.run();
    ASSERT_TRUE(run) << initializers;
    const ParamTexts t = m.texts(*run);
    EXPECT_EQ(run->period, 2);
    EXPECT_EQ(run->first, 2);  // b0, then W1: layers run b_j W_{j+1}
    EXPECT_EQ(run->layers, 9);
    EXPECT_EQ(run_reach(*run, t), 1);  // each layer reads the one before
  }
}

// A layer that differs in one constant, one attribute or one declared shape ends the run:
// the longest is then the layers before it (b0 W1 to b5 W6; b6 is the odd one).
TEST(LayerRun, EndsAtALayerThatDiffers) {
  for (int what = 0; what < 4; ++what) {
    Options o;
    o.odd_layer = 6;
    if (what == 0) o.odd_constant = 0.25;
    if (what == 1) o.odd_alpha = 0.2;
    if (what == 2) o.odd_width = 8;
    if (what == 3) {
      o.odd_constant = 0.25;
      o.initializer_constants = true;
    }
    const Model m = chain(o);
    const auto run = m.run();
    ASSERT_TRUE(run) << what;
    EXPECT_EQ(run->first, 2) << what;
    EXPECT_EQ(run->layers, 6) << what;
  }
}

// Too few layers alike: no run.
TEST(LayerRun, NoneShorterThanAsked) {
  Options o;
  o.layers = 3;  // two layers of the run: b0 W1, b1 W2
  const Model m = chain(o);
  EXPECT_FALSE(m.run());
  EXPECT_TRUE(find_graph_run(m.g, m.stages(), m.params, 2));
}

// A layer that also reads the output of the layer two before reads a value of its own there,
// named by its index: no two layers read alike, and there is no run.
TEST(LayerRun, NoneWhereALayerReadsFromTwoBefore) {
  Model m = chain(Options{});
  for (auto& n : m.g.nodes)
    if (n.op_type == "Add" && n.outputs[0] != "a0" && n.outputs[0] != "a1") {
      const int j = std::stoi(n.outputs[0].substr(1));
      n.op_type = "Sum";
      n.inputs.push_back("h" + std::to_string(j - 2));
    }
  EXPECT_FALSE(m.run());
}

// A table every layer reads (computed once, in the first layer's stage) is one value: the
// layers still repeat.
TEST(LayerRun, ATableEveryLayerReadsIsOneValue) {
  Model m = chain(Options{});
  m.g.nodes.insert(m.g.nodes.begin() + 1, node("Sin", {"m0"}, {"table"}));
  for (auto& n : m.g.nodes)
    if (n.op_type == "Add") {
      n.op_type = "Sum";
      n.inputs.push_back("table");
    }
  const auto run = m.run();
  ASSERT_TRUE(run);
  EXPECT_GE(run->layers, 8);
  EXPECT_EQ(run_reach(*run, m.texts(*run)), 1);
}

}  // namespace
}  // namespace onnx_tv::fold
