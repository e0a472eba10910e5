// Positions (solver/positions.cpp): symbols that compare only by their order, each evaluated at
// the full program's position it stands for.
#include <gtest/gtest.h>

#include "solver/evaluator.h"
#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

class PositionsTest : public ::testing::Test {
 protected:
  Context c;
  // Class "s": reduced values 0..3 standing for 0, 1, 128, 129 (two pieces of 128).
  Value p0 = c.position("s", 0, 0), p1 = c.position("s", 1, 1), p2 = c.position("s", 2, 128);
  Value q1 = c.position("t", 1, 1);  // another axis
  Value k(long long i) { return c.constant(i); }
};

TEST_F(PositionsTest, APositionIsASymbolNotItsValue) {
  EXPECT_FALSE(c.is_constant(p1));
  EXPECT_NE(p1, k(1));
  EXPECT_EQ(c.position("s", 1, 1), p1);  // one position, one symbol
  EXPECT_NE(q1, p1);
  // p^2 - p is 0 at the reduced values 0 and 1, and not as a function.
  EXPECT_NE(c.sub(c.mul(p1, p1), p1), c.zero());
  // Not an input's name: inputs are "x[0,3]".
  EXPECT_NE(c.to_string(p1).find("pos["), std::string::npos) << c.to_string(p1);
}

TEST_F(PositionsTest, EvaluatorsGiveTheFullPosition) {
  Evaluator ev(c, [](const std::string& s) -> Rational { throw std::runtime_error(s); });
  EXPECT_EQ(ev.exact(c.add(p2, k(1))), Rational(129));
  EXPECT_EQ(ev.exact(c.mul(p1, p2)), Rational(128));
}

TEST_F(PositionsTest, OrderIsDecidedWhereEveryIntegerGapDecidesIt) {
  EXPECT_EQ(c.order_of_positions(p2, p1), 1);
  EXPECT_EQ(c.order_of_positions(p0, p2), -1);
  // q + 1 > k is q >= k: decided both ways.
  EXPECT_EQ(c.order_of_positions(c.add(p1, k(1)), p0), 1);
  EXPECT_EQ(c.order_of_positions(c.add(p0, k(1)), p1), std::nullopt);  // 0 + 1 vs 1: the gap decides
  EXPECT_EQ(c.order_of_positions(c.add(p0, c.constant(Rational(1, 2))), p1), -1);
  // Scaled alike: 2 p2 - 2 p1 - 1 > 0.
  EXPECT_EQ(c.order_of_positions(c.sub(c.mul(k(2), p2), k(1)), c.mul(k(2), p1)), 1);
  // A window's edge: p2 - p0 >= 100 depends on the gap's size, which the instance does not keep.
  EXPECT_EQ(c.order_of_positions(p2, c.add(p0, k(100))), std::nullopt);
}

TEST_F(PositionsTest, AnythingButTwoPositionsOfOneClassIsNotDecided) {
  EXPECT_EQ(c.order_of_positions(p1, k(100)), std::nullopt);        // a literal
  EXPECT_EQ(c.order_of_positions(p1, q1), std::nullopt);            // two axes
  EXPECT_EQ(c.order_of_positions(c.mul(k(2), p2), p1), std::nullopt);  // scaled apart
  EXPECT_EQ(c.order_of_positions(c.mul(p1, p1), p0), std::nullopt);
  EXPECT_EQ(c.order_of_positions(c.add(p1, c.symbol("x[0]")), p0), std::nullopt);
  EXPECT_TRUE(c.has_position(c.cos(c.mul(p1, c.symbol("x[0]")))));
  EXPECT_FALSE(c.has_position(c.cos(c.symbol("x[0]"))));
}

}  // namespace
}  // namespace onnx_tv::solver
