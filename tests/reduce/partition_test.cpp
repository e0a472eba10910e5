// The plan's partition structure in the reduced instance: uneven shards keep their dimension
// at full size, ranks sharing a program must reduce alike, and dimensions are tied by position,
// never because their sizes are equal.
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

ir::Graph rows_matmul(const std::string& file, int64_t rows) {
  GraphBuilder b(file);
  b.input("x", {rows, 6});
  b.input("w", {6, 4});
  b.op("MatMul", {"x", "w"}, "y");
  b.output("y", {rows, 4});
  return b.graph();
}

// Rows of x cut into [0, 3) and [3, 10): no block size fits both pieces.
TEST(Partition, UnevenShardKeepsItsDimensionFullSize) {
  const ir::Graph spec = rows_matmul("spec.onnx", 10);
  PlanBuilder p;
  const std::vector<Span> cuts = {{0, 3}, {3, 10}};
  for (int64_t r = 0; r < 2; ++r) {
    const auto [s, e] = cuts[size_t(r)];
    p.rank(p.program(rows_matmul("rank" + std::to_string(r) + ".onnx", e - s)));
    p.bind(r, "x", "x", std::vector{span(s, e), whole});
    p.bind(r, "w", "w");
    p.bind(r, "y", "y", std::vector{span(s, e), whole});
  }
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  const reduce::ReducedDim* rows = dim_row(r, "x", 0);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->full, 10);
  EXPECT_EQ(rows->reduced, 10);
  for (const reduce::ReducedFactor& f : rows->factors) {
    EXPECT_EQ(f.reduced, f.full);
    EXPECT_NE(f.why, "");
  }
  EXPECT_EQ(full_and_reduced(dim_row(r, "x", 1)), (Fs{{6, 2}}));  // the rest still shrinks
  EXPECT_EQ(declared_shape(r.spec, "x"), (std::vector<int64_t>{10, 2}));
  EXPECT_EQ(declared_shape(r.plan.program_of(0), "x"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(declared_shape(r.plan.program_of(1), "x"), (std::vector<int64_t>{7, 2}));
  const ir::Binding* x1 = binding_of(r.plan, 1, "x");
  ASSERT_TRUE(x1);
  EXPECT_EQ(spans(*x1), (std::vector<Span>{{3, 10}, {0, 2}}));
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

// The same, the even piece bound first: it must not keep a reducible block of its own.
TEST(Partition, UnevenShardAfterAnEvenLookingPiece) {
  const ir::Graph spec = rows_matmul("spec.onnx", 12);
  PlanBuilder p;
  const std::vector<Span> cuts = {{0, 4}, {4, 12}};
  for (int64_t r = 0; r < 2; ++r) {
    const auto [s, e] = cuts[size_t(r)];
    p.rank(p.program(rows_matmul("rank" + std::to_string(r) + ".onnx", e - s)));
    p.bind(r, "x", "x", std::vector{span(s, e), whole});
    p.bind(r, "w", "w");
    p.bind(r, "y", "y", std::vector{span(s, e), whole});
  }
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  const reduce::ReducedDim* rows = dim_row(*o.reduced, "x", 0);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->reduced, 12);
  for (const reduce::ReducedFactor& f : rows->factors) EXPECT_NE(f.why, "") << f.full;
  EXPECT_EQ(declared_shape(o.reduced->plan.program_of(0), "x"), (std::vector<int64_t>{4, 2}));
}

// One program file for two ranks: rank 0 holds half of a (8 rows, an even cut that shrinks),
// rank 1 the first 4 of b's 10 rows (uneven, full size). One reduced file cannot serve both.
TEST(Partition, SharedProgramThatWouldReduceDifferentlyIsRefused) {
  GraphBuilder s("spec.onnx");
  s.input("a", {8, 6});
  s.input("b", {10, 6});
  s.op("Neg", {"a"}, "na");
  s.op("Neg", {"b"}, "nb");
  s.output("na", {8, 6});
  s.output("nb", {10, 6});
  const ir::Graph spec = s.graph();

  GraphBuilder g("shard.onnx");
  g.input("x", {4, 6});
  g.op("Neg", {"x"}, "y");
  g.output("y", {4, 6});
  PlanBuilder p;
  const size_t prog = p.program(g.graph());
  p.rank(prog);
  p.rank(prog);
  p.bind(0, "x", "a", std::vector{span(0, 4), whole});
  p.bind(0, "y", "na", std::vector{span(0, 4), whole});
  p.bind(1, "x", "b", std::vector{span(0, 4), whole});
  p.bind(1, "y", "nb", std::vector{span(0, 4), whole});

  Outcome o = reduce_of(spec, p.plan());
  EXPECT_FALSE(o.reduced);
  EXPECT_NE(o.why, "");
  EXPECT_NE(o.why.find("shard.onnx"), std::string::npos) << o.why;
}

// Ranks sharing one program that reduce alike are accepted (the refusal above is specific).
TEST(Partition, SharedProgramThatReducesAlikeIsAccepted) {
  const ir::Graph spec = rows_matmul("spec.onnx", 8);
  PlanBuilder p;
  const size_t prog = p.program(rows_matmul("shard.onnx", 4));
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(prog);
    p.bind(r, "x", "x", std::vector{span(4 * r, 4 * r + 4), whole});
    p.bind(r, "w", "w");
    p.bind(r, "y", "y", std::vector{span(4 * r, 4 * r + 4), whole});
  }
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(full_and_reduced(dim_row(*o.reduced, "x", 0)), (Fs{{2, 2}, {4, 2}}));
  EXPECT_EQ(o.reduced->plan.programs.size(), 1u);
  EXPECT_EQ(declared_shape(o.reduced->plan.program_of(1), "x"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

// x [S, heads * head_dim] with heads = head_dim = 8, viewed as [S, heads, head_dim] and
// transposed to [heads, S, head_dim]; tensor parallel over heads in two ranks.
ir::Graph heads_program(const std::string& file, int64_t heads) {
  GraphBuilder b(file);
  b.input("x", {3, heads * 8});
  b.op("Reshape", {"x", b.ints("target", {3, heads, 8})}, "x3");
  b.op("Transpose", {"x3"}, "y", {{"perm", ints_attr({1, 0, 2})}});
  b.output("y", {heads, 3, 8});
  return b.graph();
}

TEST(Partition, EqualSizedHeadsAndHeadDimAreSeparateDimensions) {
  const ir::Graph spec = heads_program("spec.onnx", 8);
  PlanBuilder p;
  const size_t prog = p.program(heads_program("shard.onnx", 4));
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(prog);
    p.bind(r, "x", "x", std::vector{whole, span(32 * r, 32 * r + 32)});
    p.bind(r, "y", "y", std::vector{span(4 * r, 4 * r + 4), whole, whole});
  }
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  // heads = (ranks 2, 4 per rank); head_dim = 8, not cut: tying the two because both are 8
  // would cut head_dim too.
  const reduce::ReducedDim* hidden = dim_row(*o.reduced, "x", 1);
  ASSERT_TRUE(hidden);
  EXPECT_EQ(full_and_reduced(hidden), (Fs{{2, 2}, {4, 2}, {8, 2}}));
  EXPECT_EQ(hidden->reduced, 8);
  EXPECT_EQ(operand_ints(o.reduced->spec, "x3", 1), (std::vector<int64_t>{2, 4, 2}));
  EXPECT_EQ(operand_ints(o.reduced->plan.program_of(0), "x3", 1), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

// Heads picked by position (Gather) keep their size; head_dim, of equal size, still shrinks.
TEST(Partition, FixingHeadsDoesNotFixAnEqualSizedHeadDim) {
  GraphBuilder b("spec.onnx");
  b.input("x", {8, 8});
  b.op("Gather", {"x", b.ints("picked", {0, 3})}, "y", {{"axis", int_attr(0)}});
  b.output("y", {2, 8});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const reduce::ReducedDim* heads = dim_row(*o.reduced, "x", 0);
  ASSERT_TRUE(heads);
  EXPECT_EQ(full_and_reduced(heads), (Fs{{8, 8}}));
  EXPECT_NE(heads->factors.at(0).why, "");
  EXPECT_EQ(full_and_reduced(dim_row(*o.reduced, "x", 1)), (Fs{{8, 2}}));
}

// The spec transposes [heads, head_dim]; the rank does not. Both are 8, so the shapes agree;
// the values do not, at full size and in the reduced instance.
TEST(Partition, MissingTransposeOfEqualSizedAxesStaysVisible) {
  GraphBuilder s("spec.onnx");
  s.input("x", {3, 8, 8});
  s.op("Transpose", {"x"}, "y", {{"perm", ints_attr({0, 2, 1})}});
  s.output("y", {3, 8, 8});
  const ir::Graph spec = s.graph();
  GraphBuilder g("rank0.onnx");
  g.input("x", {3, 8, 8});
  g.op("Identity", {"x"}, "y");
  g.output("y", {3, 8, 8});
  PlanBuilder p;
  p.rank(p.program(g.graph()));
  p.bind(0, "x", "x");
  p.bind(0, "y", "y");

  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  for (int64_t axis : {1, 2}) {
    const reduce::ReducedDim* d = dim_row(*o.reduced, "x", axis);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->factors.size(), 1u);
    EXPECT_GE(d->reduced, 2);
  }
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{"y"});
}

}  // namespace
}  // namespace onnx_tv::reduce::test
