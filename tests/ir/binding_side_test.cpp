// Which side of the plan a binding is on: a rank constant passed out as a graph output and
// bound to a spec output is an obligation, not an input.
#include <gtest/gtest.h>

#include "ir/binding_side.h"

namespace onnx_tv::ir::test {
namespace {

ir::ValueInfo info(const std::string& name) { return {name, ir::DType::Float, std::vector<ir::Dim>{}}; }

ir::ConstTensor scalar(double v) { return {ir::DType::Float, {}, {v}, {}}; }

Binding binding(const std::string& value, const std::string& spec) {
  Binding b;
  b.value = value;
  b.spec = spec;
  return b;
}

TEST(BindingSide, PlainInputsAndOutputs) {
  EXPECT_TRUE(is_input_side({.rank_input = true, .spec_in = true}));
  EXPECT_TRUE(is_input_side({.rank_initializer = true, .spec_in = true}));
  EXPECT_FALSE(is_input_side({.rank_output = true, .spec_out = true}));
  EXPECT_FALSE(is_input_side({.rank_output = true, .spec_in = true}));
}

TEST(BindingSide, ConstantOutputIsAnObligation) {
  EXPECT_FALSE(is_input_side({.rank_initializer = true, .rank_output = true, .spec_out = true}));
  // Also when the spec outputs an initializer of its own.
  EXPECT_FALSE(is_input_side(
      {.rank_initializer = true, .rank_output = true, .spec_in = true, .spec_out = true}));
  // A weight baked in as an initializer, passed out, bound to a spec parameter: an input.
  EXPECT_TRUE(is_input_side({.rank_initializer = true, .rank_output = true, .spec_in = true}));
}

TEST(BindingSide, PassedThroughInputFollowsTheSpec) {
  EXPECT_TRUE(is_input_side(
      {.rank_input = true, .rank_output = true, .spec_in = true, .spec_out = true}));
  EXPECT_FALSE(is_input_side({.rank_input = true, .rank_output = true, .spec_out = true}));
}

TEST(BindingSide, LookedUpInTheGraphs) {
  ir::Graph spec;
  spec.inputs = {info("x")};
  spec.outputs = {info("y"), info("c")};
  ir::Graph rank;
  rank.inputs = {info("x")};
  rank.outputs = {info("y"), info("k")};
  rank.initializers["k"] = scalar(2);
  EXPECT_TRUE(is_input_binding(binding("x", "x"), rank, spec));
  EXPECT_FALSE(is_input_binding(binding("y", "y"), rank, spec));
  EXPECT_FALSE(is_input_binding(binding("k", "c"), rank, spec));
  spec.initializers["c"] = scalar(2);  // the spec outputs a constant of its own
  EXPECT_FALSE(is_input_binding(binding("k", "c"), rank, spec));
}

}  // namespace
}  // namespace onnx_tv::ir::test
