// The boolean residue (solver/boolean_residue.h): differences that vanish only where the slots
// of one selection hold distinct elements are proven by CaDiCaL; differences that some allowed
// routing leaves nonzero are not, and the routing is named.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "solver/boolean_residue.h"
#include "solver/context.h"
#include "solver/evaluator.h"

namespace onnx_tv::solver {
namespace {

struct Residue : ::testing::Test {
  Context c;
  std::vector<Value> row = {c.symbol("r0"), c.symbol("r1"), c.symbol("r2"), c.symbol("r3")};
  Value slot(int64_t j, const std::vector<Value>& r) {
    Selection s;
    s.row = r;
    s.k = 2;
    s.slot = j;
    return c.select(s);
  }
  // [slot j = e] of the top 2 of `row`.
  Value holds(int64_t j, int64_t e) {
    const auto f = c.as_integer_function(slot(j, row));
    return c.indicator(f->input, e);
  }
  Value x = c.symbol("x");
};

TEST_F(Residue, EverySlotHoldsSomeElement) {
  // A slot's indicators over the whole row sum to 1 only by the axiom: the canonical form keeps
  // [s = 0] as an atom of its own (two slots at element 0 then exclude each other by a rule of
  // the form, solver/exclusive_cases.cpp), so the sum is a polynomial that CaDiCaL proves is 1.
  BooleanResidue r(c);
  std::vector<Value> at;
  for (int64_t e = 0; e < 4; ++e) at.push_back(c.mul(holds(0, e), x));
  ASSERT_NE(c.sum(at), x);
  std::string why;
  EXPECT_TRUE(r.equal(c.sum(at), x, &why)) << why;
  EXPECT_EQ(r.stats().proven, 1);
  EXPECT_GE(r.stats().solver_calls, 1);
}

TEST_F(Residue, TwoSlotsAtOneElementAreARuleOfTheForm) {
  // [s_0 = e][s_1 = e] = 0 for two slots of one row, at every element (the lowest too), so Or
  // over the slots' one-hots, p + q - pq, is their sum as a form: nothing is left to CaDiCaL.
  for (int64_t e = 0; e < 4; ++e) {
    EXPECT_EQ(c.mul(holds(0, e), holds(1, e)), c.zero()) << e;
    const Value p = holds(0, e), q = holds(1, e);
    EXPECT_EQ(c.sub(c.add(p, q), c.mul(p, q)), c.add(p, q)) << e;
  }
}

TEST_F(Residue, AMaskTimesGatesIsTheGates) {
  // Megatron's routing map times the scattered gates: (sum_j [s_j = e]) (sum_j [s_j = e] w_j)
  // is sum_j [s_j = e] w_j, through the cross terms [s_0 = e][s_1 = e] = 0.
  BooleanResidue r(c);
  const Value w0 = c.symbol("w0"), w1 = c.symbol("w1");
  for (int64_t e = 0; e < 4; ++e) {
    const Value mask = c.add(holds(0, e), holds(1, e));
    const Value gate = c.add(c.mul(holds(0, e), w0), c.mul(holds(1, e), w1));
    EXPECT_TRUE(r.equal(c.mul(mask, gate), gate)) << e;
  }
}

TEST_F(Residue, ADifferenceSomeRoutingAllowsIsNotProven) {
  // Slot 0 at element 1 against slot 1 at element 1: they differ wherever one holds.
  BooleanResidue r(c);
  std::string why;
  EXPECT_FALSE(r.equal(c.mul(holds(0, 1), x), c.mul(holds(1, 1), x), &why));
  EXPECT_NE(why.find("under the routing"), std::string::npos) << why;
  EXPECT_NE(why.find("slot 0 of a TopK row = 1"), std::string::npos) << why;
  EXPECT_EQ(r.stats().proven, 0);
  // The routing is real: scores that put element 1 first and 2 second realise it, and there
  // the two differ, evaluated exactly from the row (what a witness is).
  const std::map<std::string, Rational> at = {{"r0", 0}, {"r1", 3}, {"r2", 2}, {"r3", 1}, {"x", 5}};
  Evaluator ev(c, [&](const std::string& s) { return at.at(s); });
  EXPECT_EQ(ev.exact(c.sub(c.mul(holds(0, 1), x), c.mul(holds(1, 1), x))), Rational(5));
}

TEST_F(Residue, SlotsOfTwoRowsAreNotDistinct) {
  // The axiom binds slots of one row only: another row's slot 1 may hold what this row's slot 0
  // holds.
  BooleanResidue r(c);
  const std::vector<Value> other = {c.symbol("q0"), c.symbol("q1"), c.symbol("q2"), c.symbol("q3")};
  const auto f = c.as_integer_function(slot(1, other));
  const Value both = c.mul(c.mul(holds(0, 2), c.indicator(f->input, 2)), x);
  EXPECT_FALSE(r.equal(both, c.zero()));
  // Nor do two values of one plain integer input (two token ids) exclude each other.
  const Value a = c.integer_input("a", 0, 3), b = c.integer_input("b", 0, 3);
  (void)a;
  (void)b;
  EXPECT_FALSE(r.equal(c.mul(c.indicator("a", 1), c.indicator("b", 1)), c.zero()));
}

TEST_F(Residue, AnExpertOnTheBufferSlotOfARoutedTokenIsTheExpertOnTheToken) {
  // A padded dispatch whose routing is given as an integer input n (expert ids computed
  // elsewhere), not a selection: expert e's buffer slot holds [n = e] * x, and the gate
  // [n = e] g combines relu(w * slot). The spec applies relu to x itself. A plain input's
  // indicators make no function cases (solver/exclusive_cases.cpp takes a selection's mask
  // case by case when relu is built), so where the gate is nonzero, n = e, and the routing
  // inside relu is decided only by rewriting each term under its own routing.
  BooleanResidue r(c);
  c.integer_input("n", 0, 4);
  const Value g = c.symbol("g"), w = c.symbol("w");
  std::vector<Value> spec, plan, lossy;
  for (int64_t e = 0; e < 4; ++e) {
    const Value gate = c.mul(c.indicator("n", e), g);
    spec.push_back(c.mul(gate, c.relu(c.mul(w, x))));
    plan.push_back(c.mul(gate, c.relu(c.mul(w, c.mul(c.indicator("n", e), x)))));
    // A buffer that holds expert 1's tokens for every expert.
    lossy.push_back(c.mul(gate, c.relu(c.mul(w, c.mul(c.indicator("n", 1), x)))));
  }
  ASSERT_NE(c.sum(spec), c.sum(plan));
  std::string why;
  EXPECT_TRUE(r.equal(c.sum(spec), c.sum(plan), &why)) << why;
  EXPECT_GT(r.stats().routings, 0);
  EXPECT_FALSE(r.equal(c.sum(spec), c.sum(lossy), &why));
}

TEST_F(Residue, ABufferWithPlacesHoldsEachTokenAtItsPlace) {
  // GShard's dispatch for two tokens, each routed to 2 of 4 experts: token 1's place at expert
  // e is the count of earlier tokens routed there, mask0(e); slot p of e's buffer holds
  // sum_t mask_t(e) [place_t = p] x_t. Token 1's output combines relu(w * slot place1) by its
  // gates; the spec applies relu to x1. At e = 0 every indicator is 1 minus the others, so the
  // slot's terms are decided only together (a mask of two slots at the lowest element).
  std::vector<Value> row1 = {c.symbol("q0"), c.symbol("q1"), c.symbol("q2"), c.symbol("q3")};
  auto holds_at = [&](const std::vector<Value>& r, int64_t j, int64_t e) {
    return c.indicator(c.as_integer_function(slot(j, r))->input, e);
  };
  const Value g0 = c.symbol("g0"), g1 = c.symbol("g1"), w = c.symbol("w"), x1 = c.symbol("x1");
  BooleanResidue r(c);
  std::vector<Value> spec, plan;
  for (int64_t e = 0; e < 4; ++e) {
    const Value mask0 = c.add(holds_at(row, 0, e), holds_at(row, 1, e));
    const Value mask1 = c.add(holds_at(row1, 0, e), holds_at(row1, 1, e));
    const std::optional<Value> place1 = c.count(mask0);
    ASSERT_TRUE(place1.has_value());
    const std::string p1 = c.as_integer_function(*place1)->input;
    const Value gate = c.add(c.mul(holds_at(row1, 0, e), g0), c.mul(holds_at(row1, 1, e), g1));
    spec.push_back(c.mul(gate, c.relu(c.mul(w, x1))));
    for (int64_t p = 0; p < 2; ++p) {  // token 0's place is 0
      const Value content = c.add(c.mul(p == 0 ? mask0 : c.zero(), x),
                                  c.mul(c.mul(mask1, c.indicator(p1, p)), x1));
      plan.push_back(c.mul(c.mul(gate, c.mul(mask1, c.indicator(p1, p))),
                           c.relu(c.mul(w, content))));
    }
  }
  ASSERT_NE(c.sum(spec), c.sum(plan));
  std::string why;
  EXPECT_TRUE(r.equal(c.sum(spec), c.sum(plan), &why)) << why;
  EXPECT_GT(r.stats().routings, 0);
}

TEST_F(Residue, AnUnsortedTopKHoldsTheSortedSetInAnOrderOfItsOwn) {
  // Membership (the sum over slots) is the same for every order; slot 0 is not.
  Selection u;
  u.row = row;
  u.k = 2;
  u.order = c.fresh_order();
  auto unsorted_holds = [&](int64_t j, int64_t e) {
    u.slot = j;
    return c.indicator(c.as_integer_function(c.select(u))->input, e);
  };
  BooleanResidue r(c);
  std::string why;
  for (int64_t e = 0; e < 4; ++e) {
    const Value mine = c.mul(c.add(unsorted_holds(0, e), unsorted_holds(1, e)), x);
    const Value sorted = c.mul(c.add(holds(0, e), holds(1, e)), x);
    ASSERT_NE(mine, sorted);
    EXPECT_TRUE(r.equal(mine, sorted, &why)) << "element " << e << ": " << why;
  }
  EXPECT_FALSE(r.equal(c.mul(unsorted_holds(0, 1), x), c.mul(holds(0, 1), x), &why));
  EXPECT_NE(why.find("of an unsorted TopK"), std::string::npos) << why;
}

TEST_F(Residue, ADifferenceWithoutIndicatorsIsLeftAlone) {
  BooleanResidue r(c);
  EXPECT_FALSE(r.equal(x, c.add(x, c.one())));
  EXPECT_EQ(r.stats().coefficients, 0);
}

TEST_F(Residue, TopKAndArgMaxShareTheirFirstSlot) {
  // Slot j's element does not depend on k.
  Selection s;
  s.row = row;
  s.k = 1;
  s.slot = 0;
  EXPECT_EQ(c.select(s), slot(0, row));
}

}  // namespace
}  // namespace onnx_tv::solver
