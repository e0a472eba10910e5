// Stage cuts: cut() keeps a value as one definition atom, known_cut() reuses an atom only
// where a cut made it, and equal_unfolding() expands only as far as two forms need.
#include <gtest/gtest.h>

#include "solver/context.h"

namespace onnx_tv::solver {
namespace {

TEST(Cuts, CutIsTheSameValueAsOneAtom) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y"), z = c.symbol("z"), w = c.symbol("w");
  Value v = c.add(c.mul(x, y), z);
  Value cut = c.cut(v);
  EXPECT_NE(cut, v);
  EXPECT_EQ(c.term_count(c.mul(cut, w)), 1u);  // later products see one atom
  EXPECT_EQ(c.expand_definitions(cut, 100), v);
  EXPECT_EQ(c.cut(v), cut);  // the same value, the same atom
}

TEST(Cuts, ConstantsAndAtomsAreNotCut) {
  Context c;
  Value x = c.symbol("x");
  EXPECT_EQ(c.cut(c.constant(3)), c.constant(3));
  EXPECT_EQ(c.cut(x), x);
  Value two_x = c.mul(c.constant(2), x);
  EXPECT_EQ(c.cut(two_x), two_x);
}

TEST(Cuts, KnownCutOnlyWhereACutMadeTheAtom) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y");
  Value v = c.add(x, y);
  EXPECT_EQ(c.known_cut(v), v);
  Value cut = c.cut(v);
  // A multiple of the cut value (a rank's local mean, say) meets the same atom.
  Value scaled = c.mul(c.constant(Rational(1, 2)), v);
  EXPECT_EQ(c.known_cut(scaled), c.mul(c.constant(Rational(1, 2)), cut));
  Value other = c.sub(x, y);
  EXPECT_EQ(c.known_cut(other), other);
}

// Cut again, a cut value keeps its form, also where its content and atom together pass the
// factors kept outside a definition: a value passed on (a Recv, a Reshape) and cut again on
// one side only must still be the atom the other side holds.
TEST(Cuts, CuttingACutValueAgainKeepsIt) {
  Context c;
  Value m = c.constant(1);
  for (int i = 0; i < 6; ++i) m = c.mul(m, c.symbol("a" + std::to_string(i)));
  Value v = c.mul(m, c.add(c.symbol("x"), c.symbol("y")));
  Value once = c.cut(v);
  ASSERT_NE(once, v);
  EXPECT_EQ(c.term_count(once), 1u);
  EXPECT_EQ(c.cut(once), once);
  Value scaled = c.known_cut(c.mul(c.constant(4), v));  // a rank's unaveraged value
  EXPECT_EQ(scaled, c.mul(c.constant(4), once));
  EXPECT_EQ(c.known_cut(scaled), scaled);
}

TEST(Cuts, UnfoldingMeetsSidesCutDifferently) {
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y"), z = c.symbol("z");
  // The spec cut x + y, then (x + y) * z; a rank computed x*z + y*z in one go.
  Value a = c.cut(c.add(x, y));
  Value spec = c.cut(c.mul(a, z));
  Value rank = c.add(c.mul(x, z), c.mul(y, z));
  EXPECT_NE(spec, rank);
  EXPECT_TRUE(c.equal_unfolding(spec, rank, 1000));
  EXPECT_FALSE(c.equal_unfolding(spec, c.add(rank, x), 1000));
}

TEST(Cuts, UnfoldingGivesUpPastItsBudget) {
  Context c;
  std::vector<Value> xs, ys;
  for (int i = 0; i < 30; ++i) {
    xs.push_back(c.symbol("x" + std::to_string(i)));
    ys.push_back(c.symbol("y" + std::to_string(i)));
  }
  Value sx = c.sum(xs), sy = c.sum(ys);
  Value spec = c.mul(c.cut(sx), c.cut(sy));
  Value rank = c.expand_definitions(spec, 10'000).value();  // 900 terms
  EXPECT_TRUE(c.equal_unfolding(spec, rank, 1000));
  EXPECT_FALSE(c.equal_unfolding(spec, rank, 100));  // undecided, never a false "equal"
}

TEST(Cuts, UnfoldingRefusesAPowerFarPastItsBudget) {
  // def(a sum of 400 symbols)^4 would have about a billion terms: unfolding must give up
  // before building it, not after (memory would run out first).
  Context c;
  std::vector<Value> xs;
  for (int i = 0; i < 400; ++i) xs.push_back(c.symbol("x" + std::to_string(i)));
  Value d = c.cut(c.sum(xs));
  Value fourth = c.pow(d, c.constant(4));
  EXPECT_FALSE(c.equal_unfolding(fourth, c.mul(c.constant(2), fourth), 20'000));
  // A product of two big unfoldings is refused the same way.
  Value e = c.cut(c.sum(std::vector<Value>{xs[0], xs[1], xs[2], c.symbol("z")}));
  Value product = c.mul(c.mul(d, e), c.cut(c.add(c.sum(xs), c.symbol("w"))));
  EXPECT_FALSE(c.equal_unfolding(product, c.mul(c.constant(2), product), 20'000));
}

TEST(Cuts, AFlattenedReductionMeetsTheSumGroupedAnotherWay) {
  // The spec sums two values it cut (per-head gradients); a rank adds the same terms in other
  // groups (its own queries first, the other rank's after a collective).
  Context c;
  Value x = c.symbol("x"), y = c.symbol("y"), z = c.symbol("z"), w = c.symbol("w");
  Value head1 = c.add(c.mul(x, y), z), head2 = c.add(c.mul(z, w), x);
  Value spec = c.add(c.cut(head1), c.cut(head2));
  Value rank = c.add(c.add(c.mul(x, y), c.mul(z, w)), c.add(z, x));  // another grouping
  EXPECT_EQ(c.known_cut(rank), rank);  // a plain cut of the spec's sum would not meet it
  Value atom = c.cut_flattening(spec, 100);
  EXPECT_EQ(c.expand_definitions(atom, 100), rank);
  EXPECT_EQ(c.known_cut(rank), atom);
  EXPECT_EQ(c.known_cut(c.mul(c.constant(3), rank)), c.mul(c.constant(3), atom));
  // Past the term limit nothing more than the plain cut is registered.
  Context d;
  Value a = d.symbol("a"), b = d.symbol("b"), e = d.symbol("e");
  Value big = d.add(d.cut(d.add(d.mul(a, b), e)), d.cut(d.add(d.mul(b, e), a)));
  Value flat = d.add(d.add(d.mul(a, b), e), d.add(d.mul(b, e), a));
  d.cut_flattening(big, 3);
  EXPECT_EQ(d.known_cut(flat), flat);
}

}  // namespace
}  // namespace onnx_tv::solver
