// Which spec inputs are integer inputs with a range (plan-format section 1): bool inputs over
// {0, 1}; an integer input that indexes a Gather, through ops that only move it, over the rows
// it can pick; the smallest where it indexes several; none otherwise.
#include <gtest/gtest.h>

#include "check/integer_inputs.h"

namespace onnx_tv::check {
namespace {

ir::ValueInfo input(const std::string& name, ir::DType t, std::vector<int64_t> shape) {
  std::vector<ir::Dim> dims;
  for (int64_t d : shape) dims.push_back({d, ""});
  return {name, t, dims};
}

ir::Node node(const std::string& op, std::vector<std::string> ins, std::string out) {
  ir::Node n;
  n.op_type = op;
  n.inputs = std::move(ins);
  n.outputs = {std::move(out)};
  return n;
}

TEST(IntegerInputs, RangesComeFromTheGathersTheyIndex) {
  ir::Graph g;
  g.inputs = {input("ids", ir::DType::Int64, {2, 3}), input("labels", ir::DType::Int64, {2}),
              input("mask", ir::DType::Bool, {2}), input("pos", ir::DType::Int64, {3}),
              input("W", ir::DType::Float, {16, 4}), input("C", ir::DType::Float, {10, 4})};
  g.nodes = {node("Reshape", {"ids", "shape"}, "flat"), node("Gather", {"W", "flat"}, "e"),
             node("Gather", {"C", "ids"}, "c"), node("Gather", {"W", "labels"}, "l"),
             node("Add", {"pos", "pos"}, "pos2"), node("Gather", {"W", "pos2"}, "p")};
  g.outputs = {input("e", ir::DType::Float, {6, 4}), input("c", ir::DType::Float, {2, 3, 4}),
               input("l", ir::DType::Float, {2, 4}), input("p", ir::DType::Float, {3, 4})};
  const auto r = integer_input_ranges(g);
  EXPECT_EQ(r.at("ids").hi, 10);  // the smaller of 16 and 10
  EXPECT_EQ(r.at("ids").why, "it indexes Gather node #2 (unnamed)");
  EXPECT_EQ(r.at("labels").hi, 16);
  EXPECT_EQ(r.at("mask").hi, 2);
  EXPECT_FALSE(r.count("pos"));  // indexes only through arithmetic: stays a symbol
  EXPECT_FALSE(r.count("W"));
}

TEST(IntegerInputs, AGatherTheOutputsDoNotUseNarrowsNothing) {
  ir::Graph g;
  g.inputs = {input("ids", ir::DType::Int64, {3}), input("W", ir::DType::Float, {16, 4}),
              input("T", ir::DType::Float, {1, 2})};
  g.outputs = {input("e", ir::DType::Float, {3, 4})};
  g.nodes = {node("Gather", {"T", "ids"}, "dead"), node("Gather", {"W", "ids"}, "e")};
  EXPECT_EQ(integer_input_ranges(g).at("ids").hi, 16);
}

TEST(IntegerInputs, TablesMadeByIdentityOrConstantGiveRanges) {
  ir::Graph g;
  g.inputs = {input("ids", ir::DType::Int64, {3}), input("W", ir::DType::Float, {12, 4})};
  g.outputs = {input("e", ir::DType::Float, {3, 4})};
  g.nodes = {node("Identity", {"W"}, "W2"), node("Gather", {"W2", "ids"}, "e")};
  EXPECT_EQ(integer_input_ranges(g).at("ids").hi, 12);
}

}  // namespace
}  // namespace onnx_tv::check
