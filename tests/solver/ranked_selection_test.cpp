// Sorted selections over integer keys a routing decides (solver/ranked_selection.cpp): the
// argsort of pairs by expert is a count of the elements ahead, the argsort of that order is its
// inverse, their slots are a permutation for CaDiCaL, and a gather through both meets the
// facts of what it picks (solver/routing_prune.cpp).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "solver/context.h"
#include "solver/evaluator.h"
#include "solver/routing_sat.h"
#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

using testing::top;

struct Ranked : ::testing::Test {
  Context c;
  std::vector<Value> scores = {c.symbol("x0"), c.symbol("x1"), c.symbol("x2"), c.symbol("x3")};
  // A token's two routed experts (the top 2 of its scores) and the argsort keys of its two
  // pairs, expert * 2 + pair, as torchtitan builds them.
  Value expert(int64_t k) { return c.select(top(scores, 2, k)); }
  std::vector<Value> keys() {
    return {c.add(c.mul(expert(0), c.constant(2)), c.constant(0)),
            c.add(c.mul(expert(1), c.constant(2)), c.constant(1))};
  }
  Value order(int64_t j) { return c.select(top(keys(), 2, j, false)); }
  Value inverse(int64_t p) { return c.select(top({order(0), order(1)}, 2, p, false)); }
  std::string input(Value v) { return c.as_integer_function(v)->input; }
  Rational at(Value v, const std::map<std::string, Rational>& point) {
    Evaluator ev(c, [&](const std::string& s) { return point.at(s); });
    return *ev.exact(v);
  }
};

TEST_F(Ranked, AnArgsortByExpertIsACountOfThePairsAhead) {
  const std::string o0 = input(order(0));
  EXPECT_EQ(c.selection(o0), nullptr);  // not an opaque selection: a count with a definition
  EXPECT_NE(c.counter(o0), nullptr);
  ASSERT_NE(c.permutation(o0), nullptr);
  EXPECT_EQ(c.permutation(o0)->size(), 2u);
  // Experts 2 and 1 (x2, then x1): keys 4 and 3, so pair 1 sorts first.
  const std::map<std::string, Rational> p = {{"x0", 0}, {"x1", 1}, {"x2", 3}, {"x3", 0}};
  EXPECT_EQ(at(expert(0), p), Rational(2));
  EXPECT_EQ(at(expert(1), p), Rational(1));
  EXPECT_EQ(at(order(0), p), Rational(1));
  EXPECT_EQ(at(order(1), p), Rational(0));
  // Experts 0 and 3: keys 0 and 7, pair order kept.
  const std::map<std::string, Rational> q = {{"x0", 5}, {"x1", 1}, {"x2", 0}, {"x3", 2}};
  EXPECT_EQ(at(order(0), q), Rational(0));
  EXPECT_EQ(at(order(1), q), Rational(1));
  // What the slots hold follows from the experts: CaDiCaL sees it through the definitions.
  RoutingSat sat(c);
  const std::string e0 = input(expert(0)), e1 = input(expert(1));
  for (const auto& n : {o0, e0, e1}) sat.add(n);
  const std::vector<Fact> second_lower = {{e0, 3}, {e1, 1}};
  EXPECT_TRUE(sat.entails(second_lower, {o0, 1}));
  const std::vector<Fact> first_lower = {{e0, 1}, {e1, 3}};
  EXPECT_TRUE(sat.entails(first_lower, {o0, 0}));
}

TEST_F(Ranked, EqualKeysGoToTheLowerIndexOrTheHigherWithTiesLast) {
  const Value e = expert(0);
  EXPECT_EQ(c.select(top({e, e}, 2, 0, false)), c.constant(0));
  EXPECT_EQ(c.select(top({e, e}, 2, 1, false)), c.constant(1));
  EXPECT_EQ(c.select(top({e, e}, 1, 0, true, true)), c.constant(1));
  // Largest first: the larger expert's pair, and the tie rule only where they are equal.
  const Value first = c.select(top({expert(0), expert(1)}, 2, 0, true));
  const std::map<std::string, Rational> p = {{"x0", 0}, {"x1", 1}, {"x2", 3}, {"x3", 0}};
  EXPECT_EQ(at(first, p), Rational(0));  // experts 2 and 1: pair 0 holds the larger
}

TEST_F(Ranked, TheArgsortOfAnOrderIsItsInverse) {
  const std::string o0 = input(order(0)), o1 = input(order(1));
  const std::string i0 = input(inverse(0)), i1 = input(inverse(1));
  RoutingSat sat(c);
  for (const auto& n : {o0, o1, i0, i1}) sat.add(n);
  const std::vector<std::string> o = {o0, o1}, inv = {i0, i1};
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t j = 0; j < 2; ++j) {
      const Fact ij{inv[size_t(p)], j}, op{o[size_t(j)], p};
      EXPECT_TRUE(sat.entails(std::vector<Fact>{ij}, op)) << p << " " << j;
      EXPECT_TRUE(sat.entails(std::vector<Fact>{op}, ij)) << p << " " << j;
    }
  const std::map<std::string, Rational> p = {{"x0", 0}, {"x1", 1}, {"x2", 3}, {"x3", 0}};
  EXPECT_EQ(at(inverse(0), p), Rational(1));
  EXPECT_EQ(at(inverse(1), p), Rational(0));
}

TEST_F(Ranked, TheSlotsAreAPermutationForCaDiCaL) {
  const std::string o0 = input(order(0)), o1 = input(order(1));
  RoutingSat sat(c);
  sat.add(o0);  // its row's other slot comes with it
  EXPECT_TRUE(sat.has(o1));
  const std::vector<Fact> both_zero = {{o0, 0}, {o1, 0}};
  EXPECT_FALSE(sat.satisfiable(both_zero));
  EXPECT_TRUE(sat.entails(std::vector<Fact>{{o0, 0}}, {o1, 1}));
}

TEST_F(Ranked, AGatherThroughTheOrderAndItsInverseMeetsThePairItself) {
  // order[inverse[p]] = p. Built as a gather builds it, sum_j [inverse_p = j] order_j: the
  // products of facts no routing allows are dropped, and so is a fact the others imply (the
  // inverse's, made later), so no product of the two is left.
  const std::map<std::string, Rational> at_p = {{"x0", 0}, {"x1", 1}, {"x2", 3}, {"x3", 0}};
  const std::map<std::string, Rational> at_q = {{"x0", 5}, {"x1", 1}, {"x2", 0}, {"x3", 2}};
  for (int64_t p = 0; p < 2; ++p) {
    const auto f = c.as_integer_function(inverse(p));
    ASSERT_TRUE(f.has_value());
    std::vector<Value> picks;
    for (const Rational& j : f->values) picks.push_back(order(j.get_num().get_si()));
    const Value composed = c.from_integer_function(f->input, f->lo, picks);
    const std::string text = c.to_string(composed);
    EXPECT_EQ(text.find(f->input), std::string::npos) << text;
    EXPECT_EQ(at(composed, at_p), Rational(p)) << text;
    EXPECT_EQ(at(composed, at_q), Rational(p)) << text;
    if (p == 0) EXPECT_EQ(composed, c.zero()) << text;  // every term held order_j = 1
  }
}

TEST_F(Ranked, ARowOfOtherValuesStaysAnOpaqueSelection) {
  const std::string s = input(c.select(top(scores, 2, 0)));
  EXPECT_NE(c.selection(s), nullptr);
  EXPECT_EQ(c.permutation(s), nullptr);
  // Keys with a non-integer coefficient are not ranked either.
  const Value half = c.mul(expert(0), c.constant(Rational(1, 2)));
  const std::string h = input(c.select(top({half, c.constant(1)}, 2, 0, false)));
  EXPECT_NE(c.selection(h), nullptr);
}

}  // namespace
}  // namespace onnx_tv::solver
