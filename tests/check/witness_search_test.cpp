// The witness search of a run: points shared by every comparison, reproducible alone, and
// varied enough to separate differences that only show where many inputs are nonzero.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/witness.h"

namespace onnx_tv::check {
namespace {

using solver::Context;
using solver::Rational;
using solver::Value;

std::vector<Value> symbols(Context& c, int n) {
  std::vector<Value> out;
  for (int i = 0; i < n; ++i) out.push_back(c.symbol("x" + std::to_string(i)));
  return out;
}

TEST(WitnessSearch, RefutesADifferenceAndNotAnEquality) {
  Context c;
  auto x = symbols(c, 2);
  Value a = c.mul(x[0], x[1]);
  WitnessSearch search(c, 1);
  auto w = search.find(a, c.add(a, x[0]), 24, true);
  ASSERT_TRUE(w);
  ASSERT_EQ(w->values.size(), 1u);  // shrunk to the one input the difference needs
  EXPECT_EQ(w->values[0].symbol, "x0");
  // A cut is a different form of the same value: no point separates them.
  Value body = c.add(a, c.constant(1));
  EXPECT_NE(c.cut(body), body);
  EXPECT_FALSE(search.find(c.cut(body), body, 64, false));
}

// A difference at one token id of thousands: random ids miss it, the indicators in the terms
// where the forms differ name it.
TEST(WitnessSearch, FindsTheTokenIdWhereFormsDiffer) {
  Context c;
  const Value n = c.integer_input("ids[0]", 0, 5000), w = c.symbol("w");
  const Value a = c.mul(n, w);
  const Value b = c.add(a, c.mul(c.indicator("ids[0]", 4321), w));  // wrong at id 4321 only
  WitnessSearch search(c, 1);
  auto found = search.find(a, b, 24, true);
  ASSERT_TRUE(found);
  bool named = false;
  for (const auto& e : found->values) named |= e.symbol == "ids[0]" && e.value == "4321";
  EXPECT_TRUE(named);
  EXPECT_FALSE(search.find(a, c.add(a, c.zero()), 24, false));
}

// refutes() answers as find() does, without the witness.
TEST(WitnessSearch, RefutesAgreesWithFind) {
  Context c;
  auto x = symbols(c, 3);
  WitnessSearch search(c, 3);
  const Value a = c.mul(x[0], c.add(x[1], x[2]));
  const Value b = c.add(c.mul(x[0], x[1]), c.mul(x[0], x[2]));
  const Value d = c.mul(x[1], c.add(x[0], x[2]));
  EXPECT_FALSE(search.refutes(a, b, 24));
  EXPECT_FALSE(search.find(a, b, 24, false));
  EXPECT_TRUE(search.refutes(a, d, 24));
  EXPECT_TRUE(search.find(a, d, 24, false));
}

// Values are in lowest terms, as the report prints them.
TEST(WitnessSearch, ValuesAreInLowestTerms) {
  Context c;
  WitnessSearch search(c, 1);
  for (int t = 0; t < 64; ++t)
    for (const char* name : {"x[0]", "x[1]", "w[3,2]"}) {
      solver::Rational q = search.value(t, name);
      solver::Rational lowest = q;
      lowest.canonicalize();
      EXPECT_EQ(q.get_num(), lowest.get_num()) << t << " " << name;
      EXPECT_EQ(q.get_den(), lowest.get_den()) << t << " " << name;
    }
}

TEST(WitnessSearch, AWitnessDoesNotDependOnWhatWasComparedBefore) {
  Context c;
  auto x = symbols(c, 3);
  Value a = c.mul(x[0], c.add(x[1], x[2]));
  Value b = c.mul(x[1], c.add(x[0], x[2]));
  auto alone = find_witness(c, a, b, 7, 24, false);
  WitnessSearch shared(c, 7);
  EXPECT_TRUE(shared.find(c.mul(x[0], x[0]), c.mul(x[1], x[1]), 24, false));
  EXPECT_FALSE(shared.find(a, a, 24, false));
  auto after = shared.find(a, b, 24, false);
  ASSERT_TRUE(alone && after);
  ASSERT_EQ(alone->values.size(), after->values.size());
  for (size_t i = 0; i < alone->values.size(); ++i) {
    EXPECT_EQ(alone->values[i].symbol, after->values[i].symbol);
    EXPECT_EQ(alone->values[i].value, after->values[i].value);
  }
  EXPECT_EQ(alone->a_number, after->a_number);
  // Another seed, other points.
  WitnessSearch other(c, 8);
  bool all_same = true;
  for (int t = 0; t < 8; ++t) all_same = all_same && other.value(t, "x0") == shared.value(t, "x0");
  EXPECT_FALSE(all_same);
}

// p + log(q) against log(q): q is negative (log undefined) wherever the inputs are dense
// integers, and p, a product of all six inputs, is 0 wherever the point is sparse. Only a
// dense point of small values separates the two.
TEST(WitnessSearch, DenseSmallPointsSeparateWhatIntegerAndSparsePointsCannot) {
  Context c;
  auto x = symbols(c, 6);
  Value p = c.one(), squares = c.zero();
  for (Value v : x) {
    p = c.mul(p, v);
    squares = c.add(squares, c.mul(v, v));
  }
  Value q = c.sub(c.one(), c.mul(c.constant(Rational(1, 4)), squares));
  Value b = c.log(q);
  Value a = c.add(p, b);
  WitnessSearch search(c, 1);
  auto w = search.find(a, b, 24, false);
  ASSERT_TRUE(w);
  ASSERT_EQ(w->values.size(), 6u);
  for (const auto& e : w->values) {
    Rational r(e.value);
    EXPECT_NE(r, 0);
    EXPECT_LE(abs(r), Rational(1, 4)) << e.symbol << " = " << e.value;
  }
}

// max(x+E, E) + min(x+E, E) - 2E equals x for every E; with E = exp(4c) large, long double
// loses x in the rounding of E and used to report that error as a difference. Intervals
// confirm no point, so nothing refutes the (true) equality.
TEST(WitnessSearch, RoundingErrorIsNoWitness) {
  Context c;
  Value x = c.symbol("x");
  Value e = c.exp(c.mul(c.constant(4), c.symbol("c")));
  Value xe = c.add(x, e);
  std::vector<Value> args = {xe, e};
  Value a = c.sub(c.add(c.max(args), c.min(args)), c.mul(c.constant(2), e));
  ASSERT_NE(a, x);
  WitnessSearch search(c, 1);
  EXPECT_FALSE(search.refutes(a, x, 64));
  EXPECT_FALSE(search.find(a, x, 64, true));
  // A real difference of the same shape is still found, and reported in exact digits.
  auto w = search.find(c.add(a, c.one()), x, 64, true);
  ASSERT_TRUE(w);
}

// A shrunk witness keeps both sides defined: 1/y against -inf differs at every point where
// 1/y is defined, and zeroing y would make it undefined.
TEST(WitnessSearch, ShrinkingKeepsBothSidesDefined) {
  Context c;
  Value y = c.symbol("y");
  Value b = c.add(c.recip(y), c.symbol("z"));
  auto w = find_witness(c, Context::neg_inf(), b, 1, 24, true);
  ASSERT_TRUE(w);
  bool y_nonzero = false;
  for (const auto& e : w->values) y_nonzero |= e.symbol == "y" && Rational(e.value) != 0;
  EXPECT_TRUE(y_nonzero) << "the witness must not set the divisor y to 0";
  EXPECT_NE(w->b_number.find_first_of("0123456789"), std::string::npos) << w->b_number;
}

// Differences far below the old 1e-9 margin of long double: 2^-40 of the values is seen by the
// quick search (confirmed by intervals); 2^-80, below long double's resolution, by the full
// search's points checked with intervals alone. Reported numbers show the difference.
TEST(WitnessSearch, SmallDifferencesAreRefuted) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  Value a = c.add(c.mul(c.constant(1000), c.exp(x)), y);
  Value small = c.add(a, c.mul(c.constant(Rational(mpz_class(1), mpz_class(1) << 40)), y));
  Value tiny = c.add(a, c.mul(c.constant(Rational(mpz_class(1), mpz_class(1) << 80)), y));
  WitnessSearch search(c, 1);
  EXPECT_TRUE(search.refutes(a, small, 24));
  EXPECT_FALSE(search.refutes(a, tiny, 24));
  auto w = search.find(a, tiny, 64, true);
  ASSERT_TRUE(w);
  EXPECT_NE(w->a_number, w->b_number);
  EXPECT_TRUE(search.refutes(a, tiny, 64));
}

}  // namespace
}  // namespace onnx_tv::check
