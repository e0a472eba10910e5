#include <set>

#include "op_test_util.h"

namespace onnx_tv::ops::testing {
namespace {

using RegistryTest = OpTest;

TEST(Registry, FindsTheLatestVersionAtOrBelowTheOpset) {
  const OpSchema* s17 = find_op("", "Softmax", 17);
  ASSERT_NE(s17, nullptr);
  EXPECT_EQ(s17->since_version, 13);
  const OpSchema* s12 = find_op("ai.onnx", "Softmax", 12);
  ASSERT_NE(s12, nullptr);
  EXPECT_EQ(s12->since_version, 11);
  EXPECT_EQ(find_op("", "ReduceMean", 18)->since_version, 18);
  EXPECT_EQ(find_op("", "ReduceMean", 17)->since_version, 13);
  EXPECT_EQ(find_op("", "LayerNormalization", 16), nullptr);
  EXPECT_EQ(find_op("", "NoSuchOp", 18), nullptr);
  EXPECT_EQ(find_op("com.example", "Add", 18), nullptr);
}

TEST(Registry, ListsEveryRequiredOp) {
  std::set<std::string> names;
  for (const OpSchema* d : all_ops()) names.insert(d->op_type);
  for (const char* op :
       {"Add", "Sub", "Mul", "Div", "Neg", "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Tanh",
        "Erf", "Sigmoid", "Relu", "Softmax", "LogSoftmax", "MatMul", "Gemm", "Einsum",
        "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
        "Gather", "Expand", "Tile", "Where", "Equal", "Less", "Greater", "Cast", "Identity",
        "Constant", "ConstantOfShape", "Shape", "Range", "Trilu", "ReduceSum", "ReduceMean",
        "ReduceMax", "ReduceSumSquare", "LayerNormalization", "Dropout"}) {
    EXPECT_TRUE(names.count(op)) << op;
  }
}

TEST_F(RegistryTest, UnknownOpNamesOpDomainOpsetAndNode) {
  ir::Node n = node("FancyOp", 17, 0);
  n.domain = "com.example";
  EXPECT_THROW_MSG(run(n, {}), Unsupported, "'FancyOp'", "domain 'com.example'", "opset 17",
                   "node '/test/FancyOp'");
  ir::Node d = node("Frobnicate", 18, 0);
  EXPECT_THROW_MSG(run(d, {}), Unsupported, "'Frobnicate'", "ai.onnx");
}

TEST_F(RegistryTest, TooManyOutputsIsAnInputError) {
  Tensor x = floats({1}, {1});
  EXPECT_THROW_MSG(run(node("Relu", 14, 1, 2), {&x}), InputError, "/test/Relu", "outputs");
}

TEST_F(RegistryTest, UnnamedNodeIsNamedByIndex) {
  Tensor a = floats({2}, {1, 2}), b = floats({3}, {1, 2, 3});
  ir::Node n = node("Add", 13, 2);
  n.name.clear();
  try {
    run_node(ctx, n, 7, std::vector<const Tensor*>{&a, &b});
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Add node #7"), std::string::npos) << e.what();
  }
}

TEST_F(RegistryTest, WrongAttributeTypeIsAnInputError) {
  Tensor x = floats({2}, {1, 2});
  EXPECT_THROW_MSG(run1(node("Softmax", 13, 1, 1, {{"axis", string_attr("0")}}), {&x}),
                   InputError, "attribute 'axis'", "int");
}

}  // namespace
}  // namespace onnx_tv::ops::testing
