// SmallRational: inline arithmetic agrees with GMP, and values that leave 64 bits move to the
// heap and back without changing equality or hashing.
#include "solver/small_rational.h"

#include <gtest/gtest.h>

#include <random>

namespace onnx_tv::solver {
namespace {

Rational q(long n, long d = 1) {
  Rational r(n, d);
  r.canonicalize();
  return r;
}

TEST(SmallRational, AgreesWithGmp) {
  std::mt19937_64 rng(7);
  std::vector<Rational> vals = {q(0), q(1), q(-1), q(3, 7), q(-5, 12), q(INT64_MAX), q(-INT64_MAX),
                                q(INT64_MAX, 3), q(1, INT64_MAX), q(INT64_MIN)};
  for (int i = 0; i < 40; ++i) vals.push_back(q(long(rng() % 2001) - 1000, long(rng() % 50) + 1));
  vals.push_back(Rational(q(INT64_MAX)) * q(INT64_MAX));
  for (const auto& a : vals)
    for (const auto& b : vals) {
      SmallRational sa(a), sb(b);
      EXPECT_EQ((sa + sb).to_rational(), Rational(a + b));
      EXPECT_EQ((sa - sb).to_rational(), Rational(a - b));
      EXPECT_EQ((sa * sb).to_rational(), Rational(a * b));
      EXPECT_EQ(compare(sa, sb), cmp(a, b) > 0 ? 1 : cmp(a, b) < 0 ? -1 : 0);
      EXPECT_EQ(sa == sb, a == b);
      if (a == b) EXPECT_EQ(sa.hash(), sb.hash());
    }
}

TEST(SmallRational, LeavesAndReturnsToInline) {
  SmallRational big = SmallRational(INT64_MAX) + SmallRational(INT64_MAX);
  EXPECT_FALSE(big.is_small());
  EXPECT_EQ(big.str(), Rational(Rational(INT64_MAX) * 2).get_str());
  SmallRational back = big - SmallRational(INT64_MAX);
  EXPECT_TRUE(back.is_small());
  EXPECT_EQ(back, SmallRational(INT64_MAX));
  SmallRational copy = big;
  EXPECT_EQ(copy, big);
  EXPECT_EQ(copy.hash(), big.hash());
  SmallRational half(q(1, 2));
  EXPECT_EQ(half.str(), "1/2");
  EXPECT_EQ((half + half), SmallRational(1));
  EXPECT_TRUE((half + half).is_integer());
}

}  // namespace
}  // namespace onnx_tv::solver
