// Selections (TopK, ArgMax): each slot an integer input named by its row, evaluated from the
// row at a point, with ties to the lower index (or the higher with ties_last).
#include <gtest/gtest.h>

#include <map>

#include "solver/context.h"
#include "solver/evaluator.h"
#include "solver/interval_evaluator.h"
#include "solver_test_util.h"

namespace onnx_tv::solver {
namespace {

using testing::top;

TEST(Selections, OneRowGivesOneInputPerSlot) {
  Context ctx;
  const std::vector<Value> row = {ctx.symbol("x0"), ctx.symbol("x1"), ctx.symbol("x2")};
  EXPECT_EQ(ctx.select(top(row, 2, 0)), ctx.select(top(row, 2, 0)));  // congruence
  EXPECT_NE(ctx.select(top(row, 2, 0)), ctx.select(top(row, 2, 1)));
  EXPECT_NE(ctx.select(top(row, 2, 0)), ctx.select(top(row, 2, 0, false)));
  // A row of another canonical form is another selection.
  const std::vector<Value> other = {ctx.symbol("x0"), ctx.symbol("x1"), ctx.add(ctx.symbol("x2"), ctx.one())};
  EXPECT_NE(ctx.select(top(row, 2, 0)), ctx.select(top(other, 2, 0)));
  // The index is a function of one integer input over the row's indices.
  const auto f = ctx.as_integer_function(ctx.select(top(row, 2, 1)));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values, (std::vector<Rational>{0, 1, 2}));
  EXPECT_NE(ctx.selection(f->input), nullptr);
}

TEST(Selections, ARowOfRationalsIsSelectedAtOnce) {
  Context ctx;
  const std::vector<Value> row = {ctx.constant(2), ctx.constant(5), ctx.constant(5), ctx.constant(-1)};
  EXPECT_EQ(ctx.select(top(row, 3, 0)), ctx.constant(1));                      // 5, the first
  EXPECT_EQ(ctx.select(top(row, 3, 1)), ctx.constant(2));                      // the other 5
  EXPECT_EQ(ctx.select(top(row, 1, 0, true, true)), ctx.constant(2));          // the last 5
  EXPECT_EQ(ctx.select(top(row, 1, 0, false)), ctx.constant(3));               // the smallest
}

TEST(Selections, EvaluatorsComputeTheSelectionFromTheRow) {
  Context ctx;
  // Exact rows: ties go to the lower index, or to the higher with ties_last.
  const std::vector<Value> row = {ctx.symbol("x0"), ctx.symbol("x1"), ctx.symbol("x2")};
  std::map<std::string, Rational> at = {{"x0", 2}, {"x1", 2}, {"x2", 1}};
  auto value = [&](const std::string& s) { return at.at(s); };
  Evaluator ev(ctx, value);
  EXPECT_EQ(ev.exact(ctx.select(top(row, 2, 0))), Rational(0));
  EXPECT_EQ(ev.exact(ctx.select(top(row, 2, 1))), Rational(1));
  EXPECT_EQ(ev.exact(ctx.select(top(row, 1, 0, true, true))), Rational(1));
  EXPECT_EQ(ev.exact(ctx.select(top(row, 1, 0, false))), Rational(2));
  // A row with a transcendental element: long double proposes, intervals decide. At
  // (1, 3, exp(1)) the order is 3, e, 1: slot 1 holds element 2.
  const std::vector<Value> mixed = {ctx.symbol("x0"), ctx.symbol("x1"), ctx.exp(ctx.symbol("x2"))};
  const Value second = ctx.select(top(mixed, 2, 1));
  at = {{"x0", 1}, {"x1", 3}, {"x2", 1}};
  Evaluator ev2(ctx, value);
  EXPECT_FALSE(ev2.exact(second).has_value());
  EXPECT_EQ(ev2.approx(second), 2.0L);
  IntervalEvaluator iv(ctx, value, 128);
  const MaybeInterval s = iv.eval(ctx.sub(second, ctx.constant(2)));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->sign(), 0);
}

}  // namespace
}  // namespace onnx_tv::solver
