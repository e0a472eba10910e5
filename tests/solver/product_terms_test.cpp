// Products examined without storing them: products_share_a_term must say what share_a_term says
// of the products mul builds (it decides whether a contraction over a shrunk axis counts), and
// regular_product must flag every product whose monomials mul rewrites.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "solver/common_monomial.h"
#include "solver/context.h"
#include "solver/exponent_box.h"

namespace onnx_tv::solver {
namespace {

struct ProductTerms : ::testing::Test {
  Context c;
  Value x0 = c.symbol("x0"), x1 = c.symbol("x1"), y = c.symbol("y");
  Value one = c.one();
  size_t budget = 1'000'000;

  bool built_share(const std::vector<Value>& a, const std::vector<Value>& b) {
    std::vector<Value> p;
    for (size_t k = 0; k < a.size(); ++k) p.push_back(c.mul(a[k], b[k]));
    return share_a_term(c, p);
  }
};

TEST_F(ProductTerms, ProductsOfPositionsShareNoTerm) {
  const std::vector<Value> a{x0, x1}, b{y, y};
  EXPECT_EQ(c.products_share_a_term(a, b, budget), std::optional<bool>(false));
}

TEST_F(ProductTerms, ATermEveryProductHoldsIsFound) {
  // x_k * (y + 1/x_k) = x_k y + 1: the 1 is a count.
  const std::vector<Value> a{x0, x1}, b{c.add(y, c.recip(x0)), c.add(y, c.recip(x1))};
  EXPECT_EQ(c.products_share_a_term(a, b, budget), std::optional<bool>(true));
  EXPECT_TRUE(built_share(a, b));
}

TEST_F(ProductTerms, CoefficientsMustAgree) {
  // (x_k + k + 1) * 1/x_k: 1 + (k+1)/x_k; the 1 is common, the other terms are not.
  const std::vector<Value> a{c.add(x0, c.constant(1)), c.add(x0, c.constant(2))};
  const std::vector<Value> b{c.recip(x0), c.recip(x0)};
  EXPECT_EQ(c.products_share_a_term(a, b, budget), std::optional<bool>(true));
  // (x0 + 1) * 2 and (x0 + 1) * 3: same monomials, no common coefficient.
  const std::vector<Value> d{c.add(x0, one), c.add(x0, one)};
  const std::vector<Value> e{c.constant(2), c.constant(3)};
  EXPECT_EQ(c.products_share_a_term(d, e, budget), std::optional<bool>(false));
  EXPECT_FALSE(built_share(d, e));
}

TEST_F(ProductTerms, TermsThatCancelAreNotCommon) {
  // (x_k + 1)(x_k - 1) = x_k^2 - 1: the cross terms cancel, the -1 is common.
  const std::vector<Value> a{c.add(x0, one), c.add(x1, one)};
  const std::vector<Value> b{c.sub(x0, one), c.sub(x1, one)};
  EXPECT_EQ(c.products_share_a_term(a, b, budget), std::optional<bool>(true));
  // (x_k + y)(x_k - y) = x_k^2 - y^2 against (x_k + y)(x_k + y): y^2 in both, coefficients
  // -1 and +1.
  const std::vector<Value> d{c.add(x0, y), c.add(x1, y)};
  const std::vector<Value> e{c.sub(x0, y), c.add(x1, y)};
  EXPECT_EQ(c.products_share_a_term(d, e, budget), std::optional<bool>(false));
  EXPECT_FALSE(built_share(d, e));
}

TEST_F(ProductTerms, RewrittenMonomialsAreJudgedAsMulBuildsThem) {
  // sqrt(x_k + 1)^2 = x_k + 1: the product of the factors' monomials is sqrt(..)^2, which mul
  // rewrites; the 1 it then holds is a count.
  const Value s0 = c.sqrt(c.add(x0, one)), s1 = c.sqrt(c.add(x1, one));
  size_t spend = budget;
  EXPECT_EQ(c.regular_product(s0, s0, spend), std::optional<bool>(false));
  const std::vector<Value> a{s0, s1};
  EXPECT_EQ(c.products_share_a_term(a, a, budget), std::optional<bool>(true));
  EXPECT_TRUE(built_share(a, a));
}

TEST_F(ProductTerms, PastTheBudgetNothingIsDecided) {
  const std::vector<Value> a{c.add(x0, y), c.add(x1, y)}, b{c.add(x0, one), c.add(x1, one)};
  size_t small = 5;
  EXPECT_FALSE(c.products_share_a_term(a, b, small).has_value());
}

// Random values, some of more than kDefineAbove terms (which mul keeps as definitions), some
// holding inverses and square roots: the answer is always share_a_term of mul's products.
TEST_F(ProductTerms, AgreesWithTheProductsMulBuilds) {
  std::mt19937 rng(20261125);
  std::vector<Value> atoms{x0, x1, y, c.symbol("z"), c.recip(c.add(x0, one)),
                           c.sqrt(c.add(x1, c.constant(2))), c.recip(x1)};
  auto random_value = [&](size_t terms) {
    Value v = c.constant(int(rng() % 3));
    for (size_t t = 0; t < terms; ++t) {
      Value m = c.constant(int(rng() % 5) - 2);
      for (int f = int(rng() % 3); f > 0; --f) m = c.mul(m, atoms[rng() % atoms.size()]);
      v = c.add(v, m);
    }
    return v;
  };
  int shared = 0, not_shared = 0;
  for (int round = 0; round < 300; ++round) {
    const size_t n = 2 + rng() % 3;
    std::vector<Value> a, b;
    for (size_t k = 0; k < n; ++k) {
      a.push_back(random_value(rng() % 4 == 0 ? 40 : 1 + rng() % 4));
      b.push_back(random_value(rng() % 4 == 0 ? 40 : 1 + rng() % 4));
    }
    // Positions that repeat one pair make common terms likely.
    if (round % 2) a.back() = a.front(), b.back() = b.front();
    size_t spend = budget;
    const std::optional<bool> got = c.products_share_a_term(a, b, spend);
    ASSERT_TRUE(got.has_value());
    const bool want = built_share(a, b);
    EXPECT_EQ(*got, want) << "round " << round;
    (want ? shared : not_shared)++;
  }
  EXPECT_GT(shared, 20);
  EXPECT_GT(not_shared, 20);
}

TEST(ProductBounds, BoundsOfProductsHoldTheirMonomials) {
  Context c;
  const Value x = c.symbol("x"), y = c.symbol("y");
  const Value a = c.add(c.mul(x, x), y), b = c.add(x, c.one());  // x^2 + y, x + 1
  const std::set<AtomId> none;
  ExponentBoxes boxes(c, none);
  const ExponentBox pa = ExponentBoxes::of_products(*boxes.of(a), *boxes.of(b));
  const ExponentBox built = *boxes.of(c.mul(a, b));  // x^3 + x^2 + xy + y
  ASSERT_EQ(built.size(), pa.size());
  for (size_t i = 0; i < built.size(); ++i) {
    EXPECT_EQ(built[i].atom, pa[i].atom);
    EXPECT_LE(pa[i].lo, built[i].lo);
    EXPECT_GE(pa[i].hi, built[i].hi);
  }
  // x^3 y^0 .. : x in [0, 3], y in [0, 1].
  EXPECT_EQ(pa[0].hi, SmallRational(3));
}

}  // namespace
}  // namespace onnx_tv::solver
