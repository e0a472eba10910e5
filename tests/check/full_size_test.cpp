// Positions of a refutation on a reduced instance, named at full size (check/full_size.h,
// reduce::full_position): the same digit on every factor of each axis.
#include "check/full_size.h"

#include <gtest/gtest.h>

namespace onnx_tv::check {
namespace {

// w1 of the bundled example: [8, 16] -> [2, 4], its columns two tensor-parallel pieces of 8,
// each reduced to 2.
ReducedDim w1_rows() { return {"w1", 0, 8, 2, {{8, 2, ""}}}; }
ReducedDim w1_cols() { return {"w1", 1, 16, 4, {{2, 2, "two pieces"}, {8, 2, ""}}}; }

TEST(FullPosition, SameDigitOnEveryFactor) {
  const ReducedDim d = w1_cols();
  EXPECT_EQ(reduce::full_position(d, 0), 0);
  EXPECT_EQ(reduce::full_position(d, 1), 1);
  EXPECT_EQ(reduce::full_position(d, 2), 8);  // the second piece's first column
  EXPECT_EQ(reduce::full_position(d, 3), 9);
  EXPECT_EQ(reduce::full_position(d, 4), std::nullopt);
  EXPECT_EQ(reduce::full_position(d, -1), std::nullopt);
  // A count of ranks shrunk 8 -> 3 over pieces of 4 -> 2: rank 2's second element.
  EXPECT_EQ(reduce::full_position({"x", 0, 32, 6, {{8, 3, ""}, {4, 2, ""}}}, 5), 9);
  // Factors that do not make up the axis say nothing.
  EXPECT_EQ(reduce::full_position({"x", 0, 16, 4, {{8, 2, ""}}}, 1), std::nullopt);
  EXPECT_EQ(reduce::full_position({"x", 0, 8, 4, {{2, 4, ""}, {4, 1, ""}}}, 1), std::nullopt);
}

Reduction example_reduction() {
  Reduction red;
  red.applied = true;
  red.dims = {w1_rows(), w1_cols()};
  red.other_dims = {{"y", 0, 4, 2, {{4, 2, ""}}}, {"y", 1, 8, 2, {{8, 2, ""}}},
                    {"lr", -1, 1, 1, {}}};
  return red;
}

TEST(NameAtFullSize, ElementAndWitness) {
  Mismatch m;
  m.spec_output = "y";
  m.element = {1, 1};
  m.witness = {{"w1[1,3]", "1", ""},
               {"lr[]", "2", ""},
               {"dw{addend of rank 1 dw_part}[0,1]", "3", ""},  // no spec value: unknown
               {"w1[1]", "4", ""},                              // not w1's rank: unknown
               {"w1[1,x]", "5", ""}};
  name_at_full_size(m, example_reduction());
  ASSERT_TRUE(m.full_element);
  EXPECT_EQ(*m.full_element, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.witness[0].full_symbol, "w1[1,9]");
  EXPECT_EQ(m.witness[1].full_symbol, "lr[]");
  EXPECT_EQ(m.witness[2].full_symbol, "");
  EXPECT_EQ(m.witness[3].full_symbol, "");
  EXPECT_EQ(m.witness[4].full_symbol, "");
}

TEST(NameAtFullSize, NothingWithoutReductionOrAxes) {
  Mismatch m;
  m.spec_output = "y";
  m.element = {1, 1};
  m.witness = {{"w1[1,3]", "1", ""}};
  Reduction off = example_reduction();
  off.applied = false;
  name_at_full_size(m, off);
  EXPECT_FALSE(m.full_element);
  EXPECT_EQ(m.witness[0].full_symbol, "");
  m.spec_output = "z";  // an output whose axes the reduction does not list
  name_at_full_size(m, example_reduction());
  EXPECT_FALSE(m.full_element);
  EXPECT_EQ(m.witness[0].full_symbol, "w1[1,9]");
}

}  // namespace
}  // namespace onnx_tv::check
