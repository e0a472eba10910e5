#include <gtest/gtest.h>

#include <vector>

#include "solver/context.h"
#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

using testing::prints_as;

class Canonical : public ::testing::Test {
 protected:
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y"), z = c.symbol("z"), w = c.symbol("w");
  Value k(long long i) { return c.constant(i); }
  Value q(long n, long d) { return c.constant(Rational(n, d)); }
  Value max(std::vector<Value> v) { return c.max(v); }
  Value min(std::vector<Value> v) { return c.min(v); }
  Value sum(std::vector<Value> v) { return c.sum(v); }
};

TEST_F(Canonical, LeavesAreInterned) {
  EXPECT_SAME(c, c.symbol("x"), x);
  EXPECT_NE(x, y);
  EXPECT_SAME(c, c.constant(Rational(2, 4)), q(1, 2));
  EXPECT_SAME(c, c.constant(0LL), c.zero());
  EXPECT_SAME(c, c.constant(1LL), c.one());
  EXPECT_TRUE(c.is_constant(q(1, 3)));
  EXPECT_FALSE(c.is_constant(x));
  EXPECT_EQ(c.as_rational(q(-1, 3)), Rational(-1, 3));
  EXPECT_EQ(c.as_rational(x), std::nullopt);
}

TEST_F(Canonical, SumsReassociateAndCancel) {
  Value a = c.add(c.add(x, y), z), b = c.add(x, c.add(z, y));
  EXPECT_SAME(c, a, b);
  EXPECT_SAME(c, sum({z, x, y}), a);
  EXPECT_SAME(c, c.sub(c.add(x, y), y), x);
  EXPECT_SAME(c, c.sub(x, x), c.zero());
  EXPECT_SAME(c, c.add(c.mul(k(2), x), c.mul(k(3), x)), c.mul(k(5), x));
  EXPECT_SAME(c, c.neg(c.neg(x)), x);
  EXPECT_EQ(c.term_count(sum({x, y, z, k(1)})), 4u);
}

TEST_F(Canonical, ProductsDistributeAndCommute) {
  EXPECT_SAME(c, c.mul(x, c.add(y, z)), c.add(c.mul(x, y), c.mul(x, z)));
  EXPECT_SAME(c, c.mul(c.mul(x, y), z), c.mul(x, c.mul(z, y)));
  Value sq = c.mul(c.add(x, y), c.add(x, y));
  EXPECT_SAME(c, sq, sum({c.mul(x, x), c.mul(k(2), c.mul(x, y)), c.mul(y, y)}));
  Value xs[3] = {x, y, z}, ys[3] = {y, z, w};
  EXPECT_SAME(c, c.dot(xs, ys), sum({c.mul(x, y), c.mul(y, z), c.mul(z, w)}));
  EXPECT_SAME(c, c.mul(x, c.zero()), c.zero());
}

TEST_F(Canonical, DivisionForms) {
  // a/b + c/b == (a+c)/b
  Value b = c.add(y, z);
  EXPECT_SAME(c, c.add(c.div(x, b), c.div(w, b)), c.div(c.add(x, w), b));
  EXPECT_SAME(c, c.div(c.one(), b), c.recip(b));
  EXPECT_SAME(c, c.div(c.mul(k(2), x), y), c.mul(k(2), c.div(x, y)));
  EXPECT_SAME(c, c.div(x, c.mul(k(2), y)), c.mul(q(1, 2), c.div(x, y)));
  // x / (2y + 2z) == 1/2 * x * inv(y + z)
  Value d = c.add(c.mul(k(2), y), c.mul(k(2), z));
  EXPECT_SAME(c, c.div(x, d), c.mul(q(1, 2), c.mul(x, c.recip(c.add(y, z)))));
  // -y - z has the same denominator atom as y + z.
  EXPECT_SAME(c, c.div(x, c.neg(b)), c.neg(c.div(x, b)));
  // Monomial content: 1/(x y + x z) == 1/x * 1/(y + z).
  EXPECT_SAME(c, c.recip(c.mul(x, b)), c.mul(c.recip(x), c.recip(b)));
  EXPECT_SAME(c, c.recip(c.recip(b)), b);
  EXPECT_SAME(c, c.recip(c.recip(x)), x);
  EXPECT_SAME(c, c.mul(x, c.recip(x)), c.one());
  EXPECT_SAME(c, c.div(c.mul(x, y), x), y);
  // mean = sum * (1/n) == sum / n
  Value s = sum({x, y, z, w});
  EXPECT_SAME(c, c.mul(s, q(1, 4)), c.div(s, k(4)));
  EXPECT_SAME(c, c.div(q(1, 3), q(2, 3)), q(1, 2));
}

TEST_F(Canonical, Powers) {
  EXPECT_SAME(c, c.pow(x, k(2)), c.mul(x, x));
  EXPECT_SAME(c, c.pow(c.add(x, y), k(3)), c.mul(c.add(x, y), c.mul(c.add(x, y), c.add(x, y))));
  EXPECT_SAME(c, c.pow(x, k(-1)), c.recip(x));
  EXPECT_SAME(c, c.pow(x, k(0)), c.one());
  EXPECT_SAME(c, c.pow(x, q(1, 2)), c.sqrt(x));
  EXPECT_SAME(c, c.pow(x, q(-1, 2)), c.recip(c.sqrt(x)));
  EXPECT_SAME(c, c.pow(x, q(3, 2)), c.mul(x, c.sqrt(x)));
  EXPECT_SAME(c, c.pow(k(4), q(1, 2)), k(2));
  EXPECT_SAME(c, c.pow(q(8, 27), q(2, 3)), q(4, 9));
  EXPECT_SAME(c, c.mul(c.sqrt(x), c.sqrt(x)), x);
  Value v = c.add(c.mul(x, x), q(1, 100000));
  Value r = c.recip(c.sqrt(v));
  EXPECT_SAME(c, c.mul(r, r), c.recip(v));
  EXPECT_SAME(c, c.pow(v, q(-3, 2)), c.mul(r, c.recip(v)));
  EXPECT_SAME(c, c.mul(c.pow(x, q(1, 3)), c.mul(c.pow(x, q(1, 3)), c.pow(x, q(1, 3)))), x);
  EXPECT_SAME(c, c.pow(x, q(4, 3)), c.mul(x, c.pow(x, q(1, 3))));
  EXPECT_THROW(c.pow(x, y), Unsupported);
  EXPECT_THROW(c.pow(k(-4), q(1, 2)), MathError);
}

TEST_F(Canonical, RationalFunctionsOfConstantsFold) {
  EXPECT_SAME(c, c.exp(c.zero()), c.one());
  EXPECT_SAME(c, c.log(c.one()), c.zero());
  EXPECT_SAME(c, c.sqrt(q(9, 4)), q(3, 2));
  EXPECT_SAME(c, max({q(1, 2), q(1, 3)}), q(1, 2));
  EXPECT_SAME(c, min({q(1, 2), q(1, 3)}), q(1, 3));
  EXPECT_SAME(c, c.abs(k(-3)), k(3));
  EXPECT_SAME(c, c.erf(c.zero()), c.zero());
  EXPECT_SAME(c, c.sin(c.zero()), c.zero());
  EXPECT_SAME(c, c.cos(c.zero()), c.one());
  EXPECT_SAME(c, c.tanh(c.zero()), c.zero());
  EXPECT_SAME(c, c.sigmoid(c.zero()), q(1, 2));
  EXPECT_SAME(c, c.relu(k(-2)), c.zero());
  EXPECT_SAME(c, c.relu(k(2)), k(2));
  // Irrational results stay exact atoms.
  Value e3 = c.exp(q(1, 3));
  EXPECT_FALSE(c.as_rational(e3));
  EXPECT_TRUE(c.is_constant(e3));
  EXPECT_SAME(c, c.mul(e3, c.exp(q(2, 3))), c.exp(c.one()));
  EXPECT_SAME(c, c.log(c.exp(q(1, 3))), q(1, 3));
  EXPECT_FALSE(c.as_rational(c.sqrt(k(2))));
  EXPECT_SAME(c, c.mul(c.sqrt(k(2)), c.sqrt(k(2))), k(2));
  EXPECT_SAME(c, c.log(q(1, 2)), c.neg(c.log(k(2))));
  EXPECT_SAME(c, c.sin(q(-1, 3)), c.neg(c.sin(q(1, 3))));
  EXPECT_SAME(c, c.cos(q(-1, 3)), c.cos(q(1, 3)));
}

TEST_F(Canonical, ActivationsRewrite) {
  EXPECT_SAME(c, c.sigmoid(x), c.recip(c.add(c.one(), c.exp(c.neg(x)))));
  Value t = c.sub(c.one(), c.div(k(2), c.add(c.one(), c.exp(c.mul(k(2), x)))));
  EXPECT_SAME(c, c.tanh(x), t);
  EXPECT_SAME(c, c.relu(x), max({x, c.zero()}));
  EXPECT_SAME(c, c.relu(x), max({c.zero(), x}));
  EXPECT_SAME(c, c.exp(c.mul(k(2), x)), c.mul(c.exp(x), c.exp(x)));
  EXPECT_SAME(c, c.exp(c.neg(x)), c.recip(c.exp(x)));
  EXPECT_SAME(c, c.erf(c.neg(x)), c.neg(c.erf(x)));
  EXPECT_SAME(c, c.abs(c.mul(k(-3), x)), c.mul(k(3), c.abs(x)));
  EXPECT_SAME(c, c.exp(c.log(x)), x);
  EXPECT_SAME(c, c.exp(c.mul(q(1, 2), c.log(x))), c.sqrt(x));
  EXPECT_SAME(c, c.log(c.mul(k(3), c.exp(x))), c.add(x, c.log(k(3))));
}

TEST_F(Canonical, MaxMin) {
  EXPECT_SAME(c, max({max({x, y}), max({z, w})}), max({x, y, z, w}));
  EXPECT_SAME(c, max({x, y, x}), max({y, x}));
  EXPECT_SAME(c, max({x}), x);
  EXPECT_SAME(c, max({x, k(1), k(2)}), max({k(2), x}));
  EXPECT_SAME(c, min({min({x, y}), z}), min({z, y, x}));
  EXPECT_NE(max({x, y}), min({x, y}));
}

TEST_F(Canonical, StableSoftmaxCancelsTheMax) {
  std::vector<Value> xs = {x, y, z, w};
  Value m = max(xs);
  std::vector<Value> shifted, plain;
  for (Value v : xs) {
    shifted.push_back(c.exp(c.sub(v, m)));
    plain.push_back(c.exp(v));
  }
  Value s_shift = sum(shifted), s_plain = sum(plain);
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_SAME(c, c.div(shifted[i], s_shift), c.div(plain[i], s_plain));
  // log-sum-exp with and without the shift.
  EXPECT_SAME(c, c.add(c.log(s_shift), m), c.log(s_plain));
  // Two-stage (online) softmax over two halves.
  Value m1 = max({x, y}), m2 = max({z, w});
  Value s1 = c.add(c.exp(c.sub(x, m1)), c.exp(c.sub(y, m1)));
  Value s2 = c.add(c.exp(c.sub(z, m2)), c.exp(c.sub(w, m2)));
  Value mm = max({m1, m2});
  EXPECT_SAME(c, mm, m);
  Value s = c.add(c.mul(s1, c.exp(c.sub(m1, mm))), c.mul(s2, c.exp(c.sub(m2, mm))));
  EXPECT_SAME(c, c.div(c.exp(c.sub(x, mm)), s), c.div(plain[0], s_plain));
  // Softmax from log-softmax: exp(x - logsumexp) == softmax.
  Value lse = c.add(c.log(s_shift), m);
  EXPECT_SAME(c, c.exp(c.sub(x, lse)), c.div(plain[0], s_plain));
}

TEST_F(Canonical, PrintsReadably) {
  Value x01 = c.symbol("x[0,1]"), y0 = c.symbol("y[0]");
  Value v = c.add(c.mul(k(2), c.mul(x01, c.exp(y0))), q(1, 3));
  EXPECT_TRUE(prints_as(c, v, "2*x[0,1]*exp(y[0]) + 1/3"));
  EXPECT_TRUE(prints_as(c, c.sub(x, y), "x - y"));
  EXPECT_TRUE(prints_as(c, c.pos_inf(), "inf"));
  EXPECT_TRUE(prints_as(c, c.neg_inf(), "-inf"));
  EXPECT_TRUE(prints_as(c, c.zero(), "0"));
  EXPECT_TRUE(prints_as(c, c.recip(c.mul(x, x)), "x^-2"));
  EXPECT_TRUE(prints_as(c, c.exp(c.mul(q(1, 2), x)), "exp(x)^(1/2)"));
  std::vector<Value> many;
  for (int i = 0; i < 30; ++i) many.push_back(c.symbol("s" + std::to_string(i)));
  std::string long_text = c.to_string(sum(many));
  EXPECT_NE(long_text.find("... (30 terms)"), std::string::npos) << long_text;
  EXPECT_EQ(c.to_string(sum(many)), long_text);
}

TEST_F(Canonical, CompareConstants) {
  EXPECT_EQ(c.compare(q(1, 3), q(1, 2)), -1);
  EXPECT_EQ(c.compare(q(1, 2), q(1, 2)), 0);
  EXPECT_EQ(c.compare(c.exp(q(1, 3)), k(1)), 1);
  EXPECT_EQ(c.compare(c.exp(q(1, 3)), k(2)), -1);
  EXPECT_EQ(c.compare(c.sqrt(k(2)), q(141421, 100000)), 1);
  EXPECT_EQ(c.compare(c.neg_inf(), k(-1000)), -1);
  EXPECT_EQ(c.compare(c.pos_inf(), c.pos_inf()), 0);
  EXPECT_EQ(c.compare(c.pos_inf(), c.neg_inf()), 1);
  EXPECT_EQ(c.compare(x, k(0)), std::nullopt);
  EXPECT_EQ(c.compare(x, x), 0);
}

}  // namespace
}  // namespace onnx_tv::solver

namespace onnx_tv::solver {
namespace {

TEST(CanonicalBinomial, SigmoidAndTanhIdentities) {
  Context c;
  Value x = c.symbol("x");
  Value two = c.constant(2LL);
  EXPECT_SAME(c, c.add(c.sigmoid(x), c.sigmoid(c.neg(x))), c.one());
  // sigmoid(x) = exp(x) / (1 + exp(x))
  EXPECT_SAME(c, c.sigmoid(x), c.div(c.exp(x), c.add(c.one(), c.exp(x))));
  // tanh(x) = 2 sigmoid(2x) - 1
  EXPECT_SAME(c, c.tanh(x), c.sub(c.mul(two, c.sigmoid(c.mul(two, x))), c.one()));
  // tanh is odd
  EXPECT_SAME(c, c.tanh(c.neg(x)), c.neg(c.tanh(x)));
  // sigmoid'(x) = s (1 - s) = s - s^2, two ways
  Value s = c.sigmoid(x);
  EXPECT_SAME(c, c.mul(s, c.sub(c.one(), s)), c.sub(s, c.mul(s, s)));
  EXPECT_SAME(c, c.mul(s, c.sub(c.one(), s)), c.mul(s, c.sigmoid(c.neg(x))));
  // x / (x + 1) = 1 - 1/(x + 1)
  Value x1 = c.add(x, c.one());
  EXPECT_SAME(c, c.div(x, x1), c.sub(c.one(), c.recip(x1)));
}

}  // namespace
}  // namespace onnx_tv::solver

namespace onnx_tv::solver {
namespace {

TEST(CanonicalExtensions, NestedFractionsLogsAndConstantMax) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  Value one = c.one();
  // 1 / (1 + 1/x) == x / (x + 1)
  EXPECT_SAME(c, c.recip(c.add(one, c.recip(x))), c.div(x, c.add(x, one)));
  // 1 / (1/x + 1/y) == x y / (x + y)
  EXPECT_SAME(c, c.recip(c.add(c.recip(x), c.recip(y))), c.div(c.mul(x, y), c.add(x, y)));
  // log of rationals by prime powers
  EXPECT_SAME(c, c.log(c.constant(Rational(5, 2))), c.sub(c.log(c.constant(5LL)), c.log(c.constant(2LL))));
  EXPECT_SAME(c, c.log(c.constant(12LL)), c.add(c.mul(c.constant(2LL), c.log(c.constant(2LL))),
                                                c.log(c.constant(3LL))));
  // max of constants with atoms folds when the order is clear
  std::vector<Value> xs = {c.zero(), c.log(c.constant(Rational(10, 9)))};
  EXPECT_SAME(c, c.max(xs), xs[1]);
  // exp(1)^(3/2) / (exp(1)^(3/2) + exp(x)), built two ways
  Value e = c.exp(c.constant(Rational(3, 2)));
  Value ex = c.exp(x);
  EXPECT_SAME(c, c.div(e, c.add(e, ex)), c.recip(c.add(one, c.div(ex, e))));
  EXPECT_SAME(c, c.sigmoid(c.constant(Rational(-3, 2))),
              c.div(c.exp(c.constant(Rational(-3, 2))), c.add(one, c.exp(c.constant(Rational(-3, 2))))));
}

TEST(CanonicalScale, LargeSumsAndProducts) {
  Context c;
  std::vector<Value> xs, ws;
  for (int i = 0; i < 100000; ++i) {
    xs.push_back(c.symbol("x" + std::to_string(i)));
    ws.push_back(c.symbol("w" + std::to_string(i % 1000)));
  }
  Value s = c.sum(xs);
  EXPECT_EQ(c.term_count(s), 100000u);
  std::vector<Value> reversed(xs.rbegin(), xs.rend());
  EXPECT_EQ(c.sum(reversed), s);
  Value d = c.dot(xs, ws);
  EXPECT_EQ(c.term_count(d), 100000u);
  // (sum of 300) * (sum of 300) stays a definition squared; expanded, 45150 monomials
  std::vector<Value> head(xs.begin(), xs.begin() + 300);
  Value h = c.sum(head);
  EXPECT_EQ(c.term_count(c.mul(h, h)), 1u);
  auto expanded = c.expand_definitions(c.mul(h, h), 100000);
  ASSERT_TRUE(expanded.has_value());
  EXPECT_EQ(c.term_count(*expanded), 300u * 301u / 2);
  Value mean = c.div(s, c.constant(100000LL));
  EXPECT_EQ(c.mul(mean, c.constant(100000LL)), s);
}

}  // namespace
}  // namespace onnx_tv::solver
