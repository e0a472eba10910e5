// def(p) atoms: large products stay unexpanded, compare by structure, expand on demand, and
// evaluate as the polynomial they stand for.
#include <gtest/gtest.h>

#include "solver/context.h"
#include "solver/evaluator.h"

namespace onnx_tv::solver {
namespace {

Value sum_of(Context& c, const std::string& prefix, int n) {
  std::vector<Value> xs;
  for (int i = 0; i < n; ++i) xs.push_back(c.symbol(prefix + std::to_string(i)));
  return c.sum(xs);
}

TEST(Definitions, SmallProductsExpand) {
  Context c;
  Value a = sum_of(c, "a", 10), b = sum_of(c, "b", 10);
  EXPECT_EQ(c.term_count(c.mul(a, b)), 100u);
  // A large sum times a constant or a symbol: the constant scales it, the symbol meets a def.
  Value big = sum_of(c, "g", 40);
  EXPECT_EQ(c.term_count(c.mul(big, c.constant(3))), 40u);
  EXPECT_EQ(c.term_count(c.mul(big, c.symbol("w"))), 1u);
}

TEST(Definitions, PartialSumsTimesWeightsAddUp) {
  // Row-parallel: sum_k h_k w_k computed in two halves adds up to the whole.
  Context c;
  std::vector<Value> h, w;
  for (int k = 0; k < 8; ++k) {
    h.push_back(sum_of(c, "h" + std::to_string(k) + "_", 40));
    w.push_back(c.symbol("w" + std::to_string(k)));
  }
  Value whole = c.dot(h, w);
  Value lo = c.dot(std::span(h).first(4), std::span(w).first(4));
  Value hi = c.dot(std::span(h).last(4), std::span(w).last(4));
  EXPECT_EQ(c.add(lo, hi), whole);
  EXPECT_EQ(c.term_count(whole), 8u);
}

TEST(Definitions, LargeProductsAreDefinitionsWithContentOutside) {
  Context c;
  Value a = sum_of(c, "a", 40), b = sum_of(c, "b", 40);
  Value ab = c.mul(a, b);
  EXPECT_EQ(c.term_count(ab), 1u) << c.to_string(ab);
  // Constant and monomial factors move through definitions: (2a)(3b) == 6ab, (x a) b == x (a b).
  Value x = c.symbol("x");
  EXPECT_EQ(c.mul(c.mul(c.constant(2), a), c.mul(c.constant(3), b)), c.mul(c.constant(6), ab));
  EXPECT_EQ(c.mul(c.mul(x, a), b), c.mul(x, ab));
  EXPECT_EQ(c.mul(b, a), ab);
}

TEST(Definitions, DistributedProductsAgreeAfterExpansion) {
  Context c;
  Value a = sum_of(c, "a", 40), b = sum_of(c, "b", 40), d = sum_of(c, "d", 40);
  Value together = c.mul(c.add(a, b), d);
  Value apart = c.add(c.mul(a, d), c.mul(b, d));
  EXPECT_NE(together, apart);  // different structure, different definitions
  auto x = c.expand_definitions(together, 1 << 20), y = c.expand_definitions(apart, 1 << 20);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(*x, *y);
  EXPECT_EQ(c.term_count(*x), 3200u);
}

TEST(Definitions, ExpansionInsideFunctions) {
  Context c;
  Value a = sum_of(c, "a", 40), b = sum_of(c, "b", 40);
  Value e1 = c.exp(c.mul(a, b));
  Value e2 = c.exp(c.add(c.mul(c.sub(a, b), b), c.mul(b, b)));  // (a-b)b + b^2 = ab
  EXPECT_NE(e1, e2);
  auto x = c.expand_definitions(e1, 1 << 20), y = c.expand_definitions(e2, 1 << 20);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(*x, *y);
}

TEST(Definitions, BudgetIsRespected) {
  Context c;
  Value a = sum_of(c, "a", 100), b = sum_of(c, "b", 100);
  EXPECT_FALSE(c.expand_definitions(c.mul(a, b), 5000).has_value());
  // Products made after a failed expansion are still definitions.
  EXPECT_EQ(c.term_count(c.mul(a, b)), 1u);
}

TEST(Definitions, EvaluateAsTheirPolynomial) {
  Context c;
  Value a = sum_of(c, "a", 40), b = sum_of(c, "b", 40);
  Value ab = c.mul(a, b);
  Evaluator ev(c, [](const std::string& s) { return Rational(s[0] == 'a' ? 2 : 3); });
  auto q = ev.exact(ab);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(*q, Rational(80 * 120));
}

}  // namespace
}  // namespace onnx_tv::solver
