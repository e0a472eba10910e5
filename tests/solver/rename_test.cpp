// Renaming atoms (stage obligations): a substitution of variables, applied to canonical forms.
#include <gtest/gtest.h>

#include "solver/context.h"

namespace onnx_tv::solver {
namespace {

AtomId atom_of(const Context& ctx, Value symbol) { return ctx.term(symbol.poly, 0).factors[0].first; }

TEST(Rename, FreshSymbolIsNoNameTakenBefore) {
  Context ctx;
  const Value taken = ctx.symbol("stage#1");
  const Value a = ctx.fresh_symbol("stage"), b = ctx.fresh_symbol("stage");
  EXPECT_NE(a, taken);
  EXPECT_NE(a, b);
}

TEST(Rename, SubstitutesMonomialsAndMergesTerms) {
  Context ctx;
  const Value x = ctx.symbol("x"), y = ctx.symbol("y"), z = ctx.symbol("z");
  const Value v = ctx.add(ctx.mul(ctx.constant(2), ctx.mul(x, ctx.mul(y, y))), x);  // 2xy^2 + x
  Context::AtomImages to;
  to[atom_of(ctx, x)] = {{{atom_of(ctx, z), 1}}};
  EXPECT_EQ(ctx.rename_atoms(v, to), ctx.add(ctx.mul(ctx.constant(2), ctx.mul(z, ctx.mul(y, y))), z));
  // y -> x / z: 2 x (x/z)^2 + x, factors of one atom joined.
  Context::AtomImages onto;
  onto[atom_of(ctx, y)] = {{{atom_of(ctx, x), 1}, {atom_of(ctx, z), -1}}};
  const Value x3 = ctx.mul(x, ctx.mul(x, x));
  EXPECT_EQ(ctx.rename_atoms(v, onto),
            ctx.add(ctx.div(ctx.mul(ctx.constant(2), x3), ctx.mul(z, z)), x));
  // Terms that become one monomial add up: x + y with y -> x is 2x.
  Context::AtomImages same;
  same[atom_of(ctx, y)] = {{{atom_of(ctx, x), 1}}};
  EXPECT_EQ(ctx.rename_atoms(ctx.add(x, y), same), ctx.mul(ctx.constant(2), x));
  EXPECT_EQ(ctx.rename_atoms(ctx.sub(x, y), same), ctx.zero());
  // y -> 3z: 2 x y^2 + x is 18 x z^2 + x, the coefficient raised with its atom.
  Context::AtomImages scaled;
  scaled[atom_of(ctx, y)] = {{{atom_of(ctx, z), 1}}, SmallRational(3)};
  EXPECT_EQ(ctx.rename_atoms(v, scaled), ctx.add(ctx.mul(ctx.constant(18), ctx.mul(x, ctx.mul(z, z))), x));
}

}  // namespace
}  // namespace onnx_tv::solver
