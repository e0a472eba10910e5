// The op schema: every registration is complete, and a malformed node is an InputError naming
// what is wrong before any kernel reads it (the faults that crashed the dimension rules).
#include <set>
#include <tuple>

#include "op_test_util.h"
#include "ops/infer_shapes.h"

namespace onnx_tv::ops::testing {
namespace {

using SchemaTest = OpTest;

TEST(Schema, EveryOpHasAKernelARuleAndAnAlgebraOnce) {
  std::set<std::tuple<std::string, std::string, int>> seen;
  for (const OpSchema* s : all_ops()) {
    const std::string name = s->op_type + "-" + std::to_string(s->since_version);
    EXPECT_TRUE(bool(s->kernel)) << name << " has no kernel";
    EXPECT_NE(s->traits.rule, DimRule::Unset) << name << " has no dimension rule";
    EXPECT_NE(s->traits.algebra, Algebra::Unset) << name << " has no algebra";
    EXPECT_TRUE(seen.emplace(s->domain, s->op_type, s->since_version).second)
        << name << " is registered twice";
    // Shape inputs are never data a broadcast or a linear map reads.
    for (size_t k = 0; k < 8; ++k)
      if (s->is_shape_input(k) && s->traits.linearity != Linearity::None)
        EXPECT_FALSE(s->is_linear_input(k)) << name << " input #" << k;
  }
}

TEST(Schema, PredicatesFollowTheTraits) {
  EXPECT_TRUE(find_op("", "Add", 14)->adds());
  EXPECT_TRUE(find_op("", "Sub", 14)->adds());
  EXPECT_FALSE(find_op("", "Mul", 14)->adds());
  EXPECT_TRUE(find_op("", "Softmax", 13)->normalizes());
  EXPECT_FALSE(find_op("", "Dropout", 13)->normalizes());
  EXPECT_TRUE(find_op("", "ReduceSum", 13)->is_shape_input(1));
  EXPECT_FALSE(find_op("", "ReduceSum", 11)->is_shape_input(1));
  EXPECT_EQ(find_op("", "Reshape", 14)->traits.movement, Movement::Copies);
  EXPECT_EQ(find_op("", "Slice", 13)->traits.movement, Movement::Selects);
  EXPECT_TRUE(find_op("", "Relu", 14)->traits.piecewise);
  EXPECT_FALSE(find_op("", "Exp", 13)->traits.piecewise);
}

// Validation alone, as shape reduction calls it: full shapes, no values.
std::vector<OutputInfo> validate(const ir::Node& n, std::vector<InputInfo> in) {
  std::vector<const InputInfo*> p;
  for (auto& i : in) p.push_back(&i);
  const OpSchema* s = find_op(n.domain, n.op_type, n.opset);
  EXPECT_NE(s, nullptr) << n.op_type;
  return infer_shapes(*s, n, p);
}

InputInfo f(ir::Shape s) { return InputInfo{std::move(s), DType::Float, std::nullopt}; }
InputInfo iv(std::vector<int64_t> v) {
  return InputInfo{{int64_t(v.size())}, DType::Int64, std::move(v)};
}

TEST_F(SchemaTest, MalformedNodesAreInputErrorsNamingWhatIsWrong) {
  // Each of these crashed a dimension rule while --no-reduce rejected it.
  EXPECT_THROW_MSG(validate(node("Concat", 13, 2, 1, {{"axis", int_attr(5)}}), {f({4, 8}), f({4, 8})}),
                   InputError, "axis");
  EXPECT_THROW_MSG(validate(node("Flatten", 13, 1, 1, {{"axis", int_attr(9)}}), {f({4, 8})}),
                   InputError, "axis 9");
  EXPECT_THROW_MSG(validate(node("Gather", 13, 2, 1, {{"axis", int_attr(4)}}), {f({4, 8}), iv({0})}),
                   InputError, "axis");
  EXPECT_THROW_MSG(validate(node("Gemm", 13, 2), {f({4, 8}), f({8})}), InputError, "rank 1");
  EXPECT_THROW_MSG(validate(node("Gemm", 13, 2), {f({4, 8}), f({})}), InputError, "rank 0");
  EXPECT_THROW_MSG(validate(node("LayerNormalization", 17, 2, 1, {{"axis", int_attr(7)}}),
                            {f({4, 8}), f({8})}),
                   InputError, "axis");
  EXPECT_THROW_MSG(validate(node("MatMul", 13, 2), {f({}), f({8, 2})}), InputError, "rank 0");
  EXPECT_THROW_MSG(validate(node("MatMul", 13, 2), {f({4, 8}), f({7, 2})}), InputError, "inner");
  EXPECT_THROW_MSG(validate(node("ReduceMean", 13, 1, 1, {{"axes", ints_attr({9})}}), {f({4, 8})}),
                   InputError, "axes");
  EXPECT_THROW_MSG(validate(node("Slice", 13, 4), {f({4, 8}), iv({0}), iv({2}), iv({5})}),
                   InputError, "axes");
  EXPECT_THROW_MSG(validate(node("Split", 13, 2, 2), {f({4, 8}), iv({1, 2})}), InputError,
                   "do not add up");
  EXPECT_THROW_MSG(validate(node("Trilu", 14, 1), {f({8})}), InputError, "rank 1");
  EXPECT_THROW_MSG(validate(node("Unsqueeze", 13, 2), {f({4, 8}), iv({9})}), InputError, "axes");
  EXPECT_THROW_MSG(validate(node("Transpose", 13, 1, 1, {{"perm", ints_attr({0, 5})}}), {f({4, 8})}),
                   InputError, "perm");
  EXPECT_THROW_MSG(validate(node("Expand", 13, 2), {f({6}), iv({1, 4})}), InputError, "broadcast");
  EXPECT_THROW_MSG(validate(node("Reshape", 14, 2, 1, {{"allowzero", int_attr(1)}}),
                            {f({4, 8}), iv({0, 32})}),
                   InputError, "element counts differ");
  EXPECT_THROW_MSG(validate(node("Add", 14, 1), {f({4})}), InputError, "has 1 inputs", "Add-14 takes 2");
  EXPECT_THROW_MSG(validate(node("Softmax", 13, 1, 1, {{"axis", string_attr("0")}}), {f({4})}),
                   InputError, "attribute 'axis'", "int");
}

TEST_F(SchemaTest, SizesThatDoNotFitAreInputErrors) {
  const int64_t big = int64_t(1) << 62;
  EXPECT_THROW_MSG(validate(node("Relu", 14, 1), {f({big, 8})}), InputError, "64-bit");
  EXPECT_THROW_MSG(validate(node("Relu", 14, 1), {f({-1, 8})}), InputError, "negative");
  EXPECT_THROW_MSG(validate(node("Tile", 13, 2), {f({big}), iv({4})}), InputError, "64-bit");
  EXPECT_THROW_MSG(validate(node("Range", 11, 3),
                            {InputInfo{{}, DType::Int64, std::vector<int64_t>{INT64_MIN}},
                             InputInfo{{}, DType::Int64, std::vector<int64_t>{INT64_MAX}},
                             InputInfo{{}, DType::Int64, std::vector<int64_t>{1}}}),
                   InputError, "64-bit");
}

TEST_F(SchemaTest, ValidNodesGiveTheirShapes) {
  EXPECT_EQ(*validate(node("MatMul", 13, 2), {f({3, 4, 8}), f({8, 2})})[0].shape, (Shape{3, 4, 2}));
  EXPECT_EQ(*validate(node("Squeeze", 13, 2), {f({1, 4, 1}), iv({})})[0].shape, (Shape{1, 4, 1}));
  EXPECT_EQ(*validate(node("Squeeze", 13, 1), {f({1, 4, 1})})[0].shape, (Shape{4}));
  const auto split = validate(node("Split", 18, 1, 3, {{"num_outputs", int_attr(3)}}), {f({7})});
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(*split[2].shape, (Shape{1}));
  EXPECT_EQ(validate(node("Equal", 13, 2), {f({4}), f({4})})[0].dtype, DType::Bool);
  // A shape input whose values are not known leaves the shape open, never a guess.
  EXPECT_FALSE(validate(node("Reshape", 14, 2), {f({4, 8}), InputInfo{{2}, DType::Int64, std::nullopt}})[0]
                   .shape.has_value());
}

}  // namespace
}  // namespace onnx_tv::ops::testing
