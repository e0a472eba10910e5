// The dataflow edges of a graph as indices (ir/producers.h): each input names its producer,
// and graph inputs, initializers and omitted inputs have none.
#include "ir/producers.h"

#include <gtest/gtest.h>

namespace onnx_tv::ir {
namespace {

Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(InputProducers, EachInputNamesTheNodeThatProducesIt) {
  Graph g;
  g.inputs = {{"x", DType::Float, std::nullopt}};
  g.initializers["w"] = ConstTensor{};
  g.nodes = {node("MatMul", {"x", "w"}, {"a"}),
             node("Split", {"a"}, {"b", "", "c"}),
             node("Clip", {"c", "", "b"}, {"d"}),
             node("Add", {"d", "a"}, {"e"})};
  const InputProducers p = input_producers(g);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], (std::vector<size_t>{kNoProducer, kNoProducer}));
  EXPECT_EQ(p[1], (std::vector<size_t>{0}));
  EXPECT_EQ(p[2], (std::vector<size_t>{1, kNoProducer, 1}));
  EXPECT_EQ(p[3], (std::vector<size_t>{2, 0}));
}

}  // namespace
}  // namespace onnx_tv::ir
