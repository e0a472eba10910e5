// The tests behind the count guards: a monomial in every value (fewer ranks, micro-batches)
// and a term, monomial and coefficient, in every value (sums along a shrunk axis).
#include <gtest/gtest.h>

#include <vector>

#include "solver/common_monomial.h"
#include "solver/context.h"

namespace onnx_tv::solver {
namespace {

struct CommonMonomial : ::testing::Test {
  Context ctx;
  Value x = ctx.symbol("x"), y = ctx.symbol("y"), z = ctx.symbol("z");
  Value c(long long i) { return ctx.constant(i); }
};

TEST_F(CommonMonomial, ATermInEveryValue) {
  std::vector<Value> v{ctx.add(x, c(1)), ctx.add(y, c(1)), ctx.add(z, c(1))};
  EXPECT_TRUE(share_a_monomial(ctx, v));
  EXPECT_TRUE(share_a_term(ctx, v));
}

TEST_F(CommonMonomial, NoneWhenOneValueLacksIt) {
  std::vector<Value> v{ctx.add(x, c(1)), ctx.add(y, c(1)), z};
  EXPECT_FALSE(share_a_monomial(ctx, v));
  EXPECT_FALSE(share_a_term(ctx, v));
}

TEST_F(CommonMonomial, OtherCoefficientsShareAMonomialNotATerm) {
  // A softmax over two positions, written p and 1 - p.
  std::vector<Value> v{x, ctx.sub(c(1), x)};
  EXPECT_TRUE(share_a_monomial(ctx, v));
  EXPECT_FALSE(share_a_term(ctx, v));
}

TEST_F(CommonMonomial, CancelledProductsShareATerm) {
  // x * (1/x) at every position is the term 1.
  std::vector<Value> v{ctx.mul(x, ctx.div(c(1), x)), ctx.mul(y, ctx.div(c(1), y))};
  EXPECT_TRUE(share_a_term(ctx, v));
}

TEST_F(CommonMonomial, InfinitiesShareNothing) {
  std::vector<Value> v{Context::pos_inf(), Context::pos_inf()};
  EXPECT_FALSE(share_a_monomial(ctx, v));
  EXPECT_FALSE(share_a_term(ctx, v));
}

}  // namespace
}  // namespace onnx_tv::solver
