// Judging counts in the form a comparison proved equal in: equal_unfolding() records the
// definitions it unfolded, unfold() replaces them in any value, and exponent bounds show
// without unfolding where values can share no monomial.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "solver/common_monomial.h"
#include "solver/context.h"
#include "solver/exponent_box.h"

namespace onnx_tv::solver {
namespace {

struct Unfold : ::testing::Test {
  Context c;
  Value x0 = c.symbol("x0"), x1 = c.symbol("x1"), y = c.symbol("y");
  Value one = c.one();
  // (x_k - 1)^2 as a stage-wise run holds it: the square of a cut atom.
  Value squared_cut(Value x) {
    const Value d = c.cut(c.sub(x, one));
    return c.mul(d, d);
  }
};

TEST_F(Unfold, ADefinitionHidesATermEveryPositionHolds) {
  const std::vector<Value> built{squared_cut(x0), squared_cut(x1)};
  EXPECT_FALSE(share_a_term(c, built));  // def(1 - x0)^2 and def(1 - x1)^2
  // The comparison that proves them equal to x^2 - 2x + 1 unfolds the atoms, and says which.
  std::set<AtomId> unfolded;
  for (size_t k = 0; k < 2; ++k) {
    const Value x = k ? x1 : x0;
    const Value expanded = c.add(c.sub(c.mul(x, x), c.mul(c.constant(2), x)), one);
    ASSERT_TRUE(c.equal_unfolding(built[k], expanded, 1000, 256, &unfolded));
  }
  EXPECT_EQ(unfolded.size(), 2u);
  std::vector<Value> judged;
  for (Value v : built) judged.push_back(c.unfold(v, unfolded, 1000).value());
  EXPECT_TRUE(share_a_term(c, judged));  // the 1: a count
}

TEST_F(Unfold, OnlyTheNamedDefinitionsAreUnfolded) {
  const Value a = c.cut(c.add(x0, y)), b = c.cut(c.add(x1, y));
  const Value v = c.mul(a, b);
  std::set<AtomId> none;
  EXPECT_EQ(c.unfold(v, none, 1000), v);
  std::set<AtomId> all;
  ASSERT_TRUE(c.equal_unfolding(v, c.expand_definitions(v, 1000).value(), 1000, 256, &all));
  EXPECT_EQ(c.unfold(v, all, 1000), c.expand_definitions(v, 1000));
  // Past the budget: nothing, never a partial form.
  EXPECT_FALSE(c.unfold(v, all, 2).has_value());
}

TEST_F(Unfold, ADefinitionToANegativePowerIsNotUnfolded) {
  // 1/def(p) is not a polynomial in p's atoms: replacing it would not be a homomorphism.
  const Value d = c.cut(c.add(x0, y));
  const Value inv = c.recip(d);
  std::set<AtomId> unfolded;
  for (size_t i = 0, n = c.poly_term_count(d.poly); i < n; ++i)
    for (const auto& f : c.term(d.poly, i).factors) unfolded.insert(f.first);
  ASSERT_FALSE(unfolded.empty());
  EXPECT_FALSE(c.unfold(inv, unfolded, 1000).has_value());
  ExponentBoxes boxes(c, unfolded);
  EXPECT_FALSE(boxes.of(inv).has_value());
}

TEST_F(Unfold, BoundsShowValuesThatShareNoMonomial) {
  // Every term of x0 * def(x0 + y) holds x0; no term of def(x1 + y) * x1 does.
  const Value a = c.mul(x0, c.cut(c.add(x0, y))), b = c.mul(x1, c.cut(c.add(x1, y)));
  std::set<AtomId> unfolded;
  ASSERT_TRUE(c.equal_unfolding(a, c.expand_definitions(a, 100).value(), 100, 256, &unfolded));
  ASSERT_TRUE(c.equal_unfolding(b, c.expand_definitions(b, 100).value(), 100, 256, &unfolded));
  ExponentBoxes boxes(c, unfolded);
  const std::vector<ExponentBox> ab{boxes.of(a).value(), boxes.of(b).value()};
  EXPECT_TRUE(ExponentBoxes::disjoint(ab));
  // def(1 - x0)^2 and def(1 - x1)^2 may share one (they do: the 1); the bounds cannot say no.
  const Value p = squared_cut(x0), q = squared_cut(x1);
  ASSERT_TRUE(c.equal_unfolding(p, c.expand_definitions(p, 100).value(), 100, 256, &unfolded));
  ASSERT_TRUE(c.equal_unfolding(q, c.expand_definitions(q, 100).value(), 100, 256, &unfolded));
  ExponentBoxes more(c, unfolded);
  const std::vector<ExponentBox> pq{more.of(p).value(), more.of(q).value()};
  EXPECT_FALSE(ExponentBoxes::disjoint(pq));
}

TEST_F(Unfold, MeetingAFlattenedSumCountsAsUnfolding) {
  // A stage-wise spec cuts x_k^2 + w^2 at each position, then their sum; a rank that computed
  // the flat sum meets the spec's atom, a proof that unfolded the per-position atoms.
  // (The squares are made first: the flat sum then leads with the coefficient of the cut sum,
  // which the flattening needs to file it under the same atom.)
  const Value sq0 = c.mul(x0, x0), sq1 = c.mul(x1, x1), w2 = c.mul(y, y);
  const Value d0 = c.cut(c.add(sq0, w2)), d1 = c.cut(c.add(sq1, w2));
  const Value total = c.cut_flattening(c.add(d0, d1), 1000);
  EXPECT_TRUE(c.unfolded_by_cuts().empty());
  const Value flat = c.add(c.add(sq0, sq1), c.mul(c.constant(2), w2));
  ASSERT_EQ(c.known_cut(flat), total);
  const std::set<AtomId>& unfolded = c.unfolded_by_cuts();
  EXPECT_EQ(unfolded.size(), 2u);
  // The addends then share w^2: a count.
  const std::vector<Value> addends{c.unfold(d0, unfolded, 100).value(),
                                   c.unfold(d1, unfolded, 100).value()};
  EXPECT_TRUE(share_a_term(c, addends));
}

TEST_F(Unfold, ExtremeAtomsAreSeenThroughDefinitions) {
  const Value m = c.max(std::vector<Value>{c.add(x0, one), one});
  EXPECT_TRUE(c.has_extreme(m));
  EXPECT_TRUE(c.has_extreme(c.cut(c.add(c.mul(m, y), x1))));
  EXPECT_TRUE(c.has_extreme(c.exp(m)));
  EXPECT_FALSE(c.has_extreme(c.exp(x0)));
}

}  // namespace
}  // namespace onnx_tv::solver
