// Routing facts the canonical form keeps (two slots of one selection never hold one element)
// and functions of a routed value taken case by case (solver/exclusive_cases.cpp).
#include <gtest/gtest.h>

#include "solver/context.h"

namespace onnx_tv::solver {
namespace {

struct Router {
  Context ctx;
  std::vector<Value> row{ctx.symbol("r0"), ctx.symbol("r1"), ctx.symbol("r2"), ctx.symbol("r3")};
  std::string slot(int64_t j, std::vector<Value> of = {}, bool largest = true, std::string order = "") {
    Selection s;
    s.row = of.empty() ? row : of;
    s.k = 2;
    s.slot = j;
    s.largest = largest;
    s.order = std::move(order);
    return ctx.as_integer_function(ctx.select(s))->input;
  }
  Value is(const std::string& s, int64_t e) { return ctx.indicator(s, e); }
  // The padded dispatch mask of expert e: 1 where either slot holds it.
  Value mask(int64_t e) { return ctx.add(is(slot(0), e), is(slot(1), e)); }
  Value silu(Value x) { return ctx.mul(x, ctx.sigmoid(x)); }
};

TEST(ExclusiveCases, TwoSlotsOfOneSelectionNeverHoldOneElement) {
  Router r;
  for (int64_t e = 0; e < 4; ++e)  // the lowest element too: [s = 0] is an atom of its own
    EXPECT_EQ(r.ctx.mul(r.is(r.slot(0), e), r.is(r.slot(1), e)), r.ctx.zero()) << e;
  EXPECT_NE(r.ctx.mul(r.is(r.slot(0), 1), r.is(r.slot(1), 2)), r.ctx.zero());
  // Slots of another row, of the smallest, or of an unsorted order are other selections.
  const std::vector<Value> other = {r.ctx.symbol("r0"), r.ctx.symbol("r1"), r.ctx.symbol("q"),
                                    r.ctx.symbol("r3")};
  EXPECT_NE(r.ctx.mul(r.is(r.slot(0), 1), r.is(r.slot(1, other), 1)), r.ctx.zero());
  EXPECT_NE(r.ctx.mul(r.is(r.slot(0), 1), r.is(r.slot(1, {}, false), 1)), r.ctx.zero());
  const std::string order = r.ctx.fresh_order();
  EXPECT_NE(r.ctx.mul(r.is(r.slot(0), 1), r.is(r.slot(1, {}, true, order), 1)), r.ctx.zero());
  EXPECT_EQ(r.ctx.mul(r.is(r.slot(0, {}, true, order), 1), r.is(r.slot(1, {}, true, order), 1)),
            r.ctx.zero());
}

TEST(ExclusiveCases, ADispatchMaskIsItsOwnSquare) {
  Router r;
  for (int64_t e = 0; e < 4; ++e) EXPECT_EQ(r.ctx.mul(r.mask(e), r.mask(e)), r.mask(e)) << e;
}

TEST(ExclusiveCases, AnExpertOnARoutedSlotIsTheExpertOnTheToken) {
  Router r;
  const Value x = r.ctx.add(r.ctx.symbol("x0"), r.ctx.mul(r.ctx.symbol("w"), r.ctx.symbol("x1")));
  for (int64_t e = 0; e < 4; ++e) {
    const Value m = r.mask(e);
    // silu(m x) = m silu(x): where the mask is 0 both are silu(0) = 0.
    EXPECT_EQ(r.silu(r.ctx.mul(m, x)), r.ctx.mul(m, r.silu(x))) << e;
    // exp(m x) = 1 + m (exp(x) - 1).
    EXPECT_EQ(r.ctx.exp(r.ctx.mul(m, x)),
              r.ctx.add(r.ctx.one(), r.ctx.mul(m, r.ctx.sub(r.ctx.exp(x), r.ctx.one()))));
    Value args[2] = {r.ctx.mul(m, x), r.ctx.zero()};
    EXPECT_EQ(r.ctx.max(args), r.ctx.mul(m, r.ctx.relu(x)));
  }
  // A slot of an argsort buffer: the token the permutation put there.
  const std::string s = r.slot(0);
  const Value y0 = r.ctx.symbol("y0"), y1 = r.ctx.symbol("y1"), y2 = r.ctx.symbol("y2"),
              y3 = r.ctx.symbol("y3");
  Value buf = r.ctx.zero();
  const Value ys[4] = {y0, y1, y2, y3};
  for (int64_t e = 0; e < 4; ++e) buf = r.ctx.add(buf, r.ctx.mul(r.is(s, e), ys[e]));
  Value want = r.ctx.zero();
  for (int64_t e = 0; e < 4; ++e) want = r.ctx.add(want, r.ctx.mul(r.is(s, e), r.ctx.exp(ys[e])));
  EXPECT_EQ(r.ctx.exp(buf), r.ctx.add(r.ctx.exp(y0), r.ctx.sub(want, r.ctx.mul(r.ctx.add(r.ctx.add(r.ctx.add(r.is(s, 0), r.is(s, 1)), r.is(s, 2)), r.is(s, 3)), r.ctx.exp(y0)))));
}

TEST(ExclusiveCases, CasesThatMayHoldTogetherStayWhole) {
  Router r;
  const Value x = r.ctx.symbol("x");
  // Slot 0 at expert 1 and slot 1 at expert 2 may hold at once: exp(([a] + [b]) x) is not
  // 1 + ([a] + [b])(exp(x) - 1), which would be wrong where both hold.
  const Value both = r.ctx.add(r.is(r.slot(0), 1), r.is(r.slot(1), 2));
  const Value e = r.ctx.exp(r.ctx.mul(both, x));
  EXPECT_NE(e, r.ctx.add(r.ctx.one(), r.ctx.mul(both, r.ctx.sub(r.ctx.exp(x), r.ctx.one()))));
  EXPECT_EQ(r.ctx.term_count(e), 1u);  // one exp atom of the whole argument
  // A token id's indicators (an embedding row) make no cases: only selections do.
  const Value id = r.ctx.integer_input("ids", 0, 4);
  const Value row = r.ctx.mul(r.ctx.indicator("ids", 2), x);
  EXPECT_EQ(r.ctx.term_count(r.ctx.exp(row)), 1u);
  (void)id;
}

TEST(ExclusiveCases, ARoutedValueIsCutCaseByCase) {
  Router r;
  const Value x = r.ctx.add(r.ctx.symbol("a"), r.ctx.symbol("b"));
  const Value cx = r.ctx.cut(x);  // the spec cut x
  ASSERT_NE(cx, x);
  const Value m = r.mask(2);
  // A rank's m x meets the spec's cut in each case; the mask stays visible.
  EXPECT_EQ(r.ctx.known_cut(r.ctx.mul(m, x)), r.ctx.mul(m, cx));
  EXPECT_EQ(r.ctx.cut(r.ctx.mul(m, x)), r.ctx.mul(m, cx));
  // A routing mask alone is never made a definition.
  EXPECT_EQ(r.ctx.cut(m), m);
}

// A sequence-wise auxiliary loss, sum_e f_e P_e with f_e the count of the tokens' top-k slots
// holding expert e: every term routed, one per token, slot and expert. Past kRoutedCutAbove
// terms a stage cut takes it (a rank computing the same sum meets it at the same atom); a small
// routed value stays as it is.
TEST(ExclusiveCases, ALargeSumOverExpertsOfRoutedTermsIsCut) {
  Router r;
  auto aux = [&](int64_t tokens) {
    std::vector<Value> terms;
    for (int64_t t = 0; t < tokens; ++t) {
      std::vector<Value> row;
      for (int64_t e = 0; e < 4; ++e)
        row.push_back(r.ctx.symbol("s" + std::to_string(t) + "_" + std::to_string(e)));
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t e = 0; e < 4; ++e)
          terms.push_back(r.ctx.mul(r.is(r.slot(j, row), e), r.ctx.symbol("P" + std::to_string(e))));
    }
    return r.ctx.sum(terms);
  };
  const Value small = aux(2);
  ASSERT_EQ(r.ctx.term_count(small), 16u);
  EXPECT_EQ(r.ctx.cut(small), small);
  const Value large = aux(130);
  ASSERT_GT(r.ctx.term_count(large), 1024u);
  const Value cut = r.ctx.cut(large);
  EXPECT_EQ(r.ctx.term_count(cut), 1u);
  EXPECT_EQ(r.ctx.known_cut(aux(130)), cut);
}

}  // namespace
}  // namespace onnx_tv::solver
