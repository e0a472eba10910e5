// Dimension inference on the shape arithmetic of torch exports: Shape/Gather/Concat chains into
// Reshape targets, -1 and 0 in targets, GQA's Unsqueeze+Expand+Reshape, and rotate-half's
// slices at head_dim / 2. The reduced operands must be the reduced sizes and the reduced
// programs must still run.
#include <limits>

#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// Attention scores of one projection, as torch exports them: q = x @ wq, viewed as
// [B, S, heads, 6] through Shape/Gather/Unsqueeze/Concat, transposed to [B, heads, S, 6],
// scores = q @ q^T.
ir::Graph scores_program(const std::string& file, int64_t heads) {
  GraphBuilder b(file);
  b.input("x", {3, 5, 48});
  b.input("wq", {48, heads * 6});
  b.op("MatMul", {"x", "wq"}, "q");
  b.op("Concat",
       {b.shape_entry("q", 0), b.shape_entry("q", 1), b.ints("heads", {heads}),
        b.ints("head_dim", {6})},
       "q_target", {{"axis", int_attr(0)}});
  b.op("Reshape", {"q", "q_target"}, "q4");
  b.op("Transpose", {"q4"}, "qt", {{"perm", ints_attr({0, 2, 1, 3})}});
  b.op("Transpose", {"qt"}, "kt", {{"perm", ints_attr({0, 1, 3, 2})}});
  b.op("MatMul", {"qt", "kt"}, "scores");
  b.output("scores", {3, heads, 5, 5});
  return b.graph();
}

// Column-parallel over two ranks: rank r holds heads [4r, 4r + 4) of 8.
ir::Plan column_parallel_scores(bool swap_shards = false) {
  PlanBuilder p;
  const size_t prog = p.program(scores_program("shard.onnx", 4));
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(prog);
    const int64_t w = swap_shards ? 1 - r : r;
    p.bind(r, "x", "x");
    p.bind(r, "wq", "wq", std::vector{whole, span(24 * w, 24 * w + 24)});
    p.bind(r, "scores", "scores", std::vector{whole, span(4 * r, 4 * r + 4), whole, whole});
  }
  return p.plan();
}

TEST(TorchExport, ShapeGatherConcatReshapeTargetIsTheReducedSizes) {
  const ir::Graph spec = scores_program("spec.onnx", 8);
  Outcome o = reduce_of(spec, column_parallel_scores());
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  // Hidden 48 of wq's columns is (ranks 2, heads per rank 4, head_dim 6); the rank count keeps
  // its size, the rest shrink to 2.
  const reduce::ReducedDim* cols = dim_row(r, "wq", 1);
  ASSERT_TRUE(cols);
  EXPECT_EQ(cols->full, 48);
  EXPECT_EQ(cols->reduced, 8);
  EXPECT_EQ(full_and_reduced(cols), (Fs{{2, 2}, {4, 2}, {6, 2}}));
  EXPECT_NE(cols->factors[0].why.find("'wq'"), std::string::npos) << cols->factors[0].why;
  EXPECT_EQ(cols->factors[1].why, "");
  EXPECT_EQ(full_and_reduced(dim_row(r, "x", 2)), (Fs{{48, 2}}));
  EXPECT_EQ(declared_shape(r.spec, "x"), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(declared_shape(r.spec, "wq"), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(declared_shape(r.spec, "scores"), (std::vector<int64_t>{2, 4, 2, 2}));

  // The Reshape reads a rewritten target holding the reduced sizes, on both sides.
  EXPECT_TRUE(is_rewritten(operand_name(r.spec, "q4", 1)));
  EXPECT_EQ(operand_ints(r.spec, "q4", 1), (std::vector<int64_t>{2, 2, 4, 2}));
  const ir::Graph& rank = r.plan.program_of(1);
  EXPECT_TRUE(is_rewritten(operand_name(rank, "q4", 1)));
  EXPECT_EQ(operand_ints(rank, "q4", 1), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(declared_shape(rank, "wq"), (std::vector<int64_t>{2, 4}));

  const ir::Binding* wq1 = binding_of(r.plan, 1, "wq");
  ASSERT_TRUE(wq1);
  EXPECT_EQ(spans(*wq1), (std::vector<Span>{Span{0, 2}, Span{4, 8}}));
  const ir::Binding* s1 = binding_of(r.plan, 1, "scores");
  ASSERT_TRUE(s1);
  EXPECT_EQ(spans(*s1), (std::vector<Span>{Span{0, 2}, Span{2, 4}, Span{0, 2}, Span{0, 2}}));

  // The reduced spec runs at the reduced sizes and the reduced plan is proven equal to it.
  auto run = run_alone(r.spec);
  EXPECT_EQ(run->at("q4").shape, (ir::Shape{2, 2, 4, 2}));
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

TEST(TorchExport, SwappedShardsStillDifferAfterReduction) {
  const ir::Graph spec = scores_program("spec.onnx", 8);
  Outcome o = reduce_of(spec, column_parallel_scores(/*swap_shards=*/true));
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan),
            std::vector<std::string>{"scores"});
}

// view(B, S, -1, head_dim) with the batch and sequence read from the shape.
TEST(TorchExport, MinusOneInAReshapeTargetStaysMinusOne) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 10, 48});
  b.op("Concat", {b.shape_entry("x", 0), b.shape_entry("x", 1), b.ints("infer", {-1}),
                  b.ints("head_dim", {6})},
       "target", {{"axis", int_attr(0)}});
  b.op("Reshape", {"x", "target"}, "y");
  b.output("y", {3, 10, 8, 6});
  const ir::Graph spec = b.graph();

  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  EXPECT_EQ(full_and_reduced(dim_row(r, "x", 2)), (Fs{{8, 2}, {6, 2}}));
  EXPECT_EQ(operand_ints(r.spec, "y", 1), (std::vector<int64_t>{2, 2, -1, 2}));
  EXPECT_EQ(operand_ints(r.plan.program_of(0), "y", 1), (std::vector<int64_t>{2, 2, -1, 2}));
  EXPECT_EQ(declared_shape(r.spec, "y"), (std::vector<int64_t>{2, 2, 2, 2}));
  auto run = run_alone(r.spec);
  EXPECT_EQ(run->at("y").shape, (ir::Shape{2, 2, 2, 2}));
}

// The optimiser's form: zeros copy the input's leading sizes.
TEST(TorchExport, ZerosAndMinusOneInAConstantTarget) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 10, 48});
  b.op("Reshape", {"x", b.initializer("target", int_tensor({0, 0, -1, 6}))}, "y");
  b.output("y", {3, 10, 8, 6});
  const ir::Graph spec = b.graph();

  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const std::vector<int64_t> target = *operand_ints(o.reduced->spec, "y", 1);
  ASSERT_EQ(target.size(), 4u);
  EXPECT_EQ(target[2], -1);
  EXPECT_EQ(target[3], 2);
  // 0 copies the reduced input size; a written size must be that reduced size.
  EXPECT_TRUE(target[0] == 0 || target[0] == 2) << target[0];
  EXPECT_TRUE(target[1] == 0 || target[1] == 2) << target[1];
  auto run = run_alone(o.reduced->spec);
  EXPECT_EQ(run->at("y").shape, (ir::Shape{2, 2, 2, 2}));
}

// repeat_kv: k [B, kv, S, d] -> k[:, :, None] -> expand(B, kv, rep, S, d) -> reshape(B, kv*rep,
// S, d), then scores against q [B, kv*rep, S, d].
ir::Graph gqa_program(const std::string& file) {
  GraphBuilder b(file);
  b.input("q", {3, 12, 6, 8});
  b.input("k", {3, 4, 6, 8});
  b.op("Unsqueeze", {"k", b.ints("axes", {2})}, "k5");
  b.op("Concat", {b.shape_entry("k", 0), b.shape_entry("k", 1), b.ints("rep", {3}),
                  b.shape_entry("k", 2), b.shape_entry("k", 3)},
       "expand_to", {{"axis", int_attr(0)}});
  b.op("Expand", {"k5", "expand_to"}, "k_rep");
  b.op("Reshape", {"k_rep", b.initializer("merged", int_tensor({3, 12, 6, 8}))}, "k_all");
  b.op("Transpose", {"k_all"}, "kt", {{"perm", ints_attr({0, 1, 3, 2})}});
  b.op("MatMul", {"q", "kt"}, "scores");
  b.output("scores", {3, 12, 6, 6});
  return b.graph();
}

TEST(TorchExport, GqaRepeatKeepsKvAndRepFactorsAtTwo) {
  const ir::Graph spec = gqa_program("spec.onnx");
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  // q's heads are (kv 4, rep 3), kv major: both factors stay at 2 elements, so every kv head
  // still serves two query heads and there are still two kv heads.
  const reduce::ReducedDim* heads = dim_row(r, "q", 1);
  ASSERT_TRUE(heads);
  EXPECT_EQ(full_and_reduced(heads), (Fs{{4, 2}, {3, 2}}));
  EXPECT_EQ(heads->reduced, 4);
  EXPECT_EQ(full_and_reduced(dim_row(r, "k", 1)), (Fs{{4, 2}}));
  EXPECT_EQ(declared_shape(r.spec, "k"), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(declared_shape(r.spec, "q"), (std::vector<int64_t>{2, 4, 2, 2}));

  // Expand and Reshape targets agree with each other and with q.
  EXPECT_TRUE(is_rewritten(operand_name(r.spec, "k_rep", 1)));
  EXPECT_EQ(operand_ints(r.spec, "k_rep", 1), (std::vector<int64_t>{2, 2, 2, 2, 2}));
  EXPECT_TRUE(is_rewritten(operand_name(r.spec, "k_all", 1)));
  EXPECT_EQ(operand_ints(r.spec, "k_all", 1), (std::vector<int64_t>{2, 4, 2, 2}));
  auto run = run_alone(r.spec);
  EXPECT_EQ(run->at("k_rep").shape, (ir::Shape{2, 2, 2, 2, 2}));
  EXPECT_EQ(run->at("scores").shape, (ir::Shape{2, 4, 2, 2}));
  // Query head 1 reads kv head 0 and query head 2 reads kv head 1 (kv major): element
  // [0, 1, 0, 0] of the scores is q[0,1,0,:] . k[0,0,0,:], element [0, 2, 0, 0] uses k[0,1,0,:].
  const ir::Tensor& s = run->at("scores");
  auto dot = [&](int64_t q_flat, int64_t k_flat) {
    return run->ctx.add(run->ctx.mul(run->sym("q", q_flat), run->sym("k", k_flat)),
                        run->ctx.mul(run->sym("q", q_flat + 1), run->sym("k", k_flat + 1)));
  };
  EXPECT_EQ(s.data[4], dot(4, 0));   // [0,1,0,0]: q offset 1*4, k head 0
  EXPECT_EQ(s.data[8], dot(8, 4));   // [0,2,0,0]: q offset 2*4, k head 1 at offset 1*4
}

// rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2]); y = x * cos + rotate_half(x) * sin.
ir::Graph rope_program(const std::string& file, bool sign_on_wrong_half = false) {
  GraphBuilder b(file);
  b.input("x", {3, 5, 8});
  b.input("cos", {5, 8});
  b.input("sin", {5, 8});
  b.op("Slice", {"x", b.ints("s1", {0}), b.ints("e1", {4}), b.ints("a1", {-1})}, "x1");
  b.op("Slice",
       {"x", b.ints("s2", {4}), b.ints("e2", {std::numeric_limits<int64_t>::max()}),
        b.ints("a2", {-1})},
       "x2");
  if (sign_on_wrong_half) {
    b.op("Neg", {"x1"}, "neg");
    b.op("Concat", {"x2", "neg"}, "rot", {{"axis", int_attr(-1)}});
  } else {
    b.op("Neg", {"x2"}, "neg");
    b.op("Concat", {"neg", "x1"}, "rot", {{"axis", int_attr(-1)}});
  }
  b.op("Mul", {"x", "cos"}, "xc");
  b.op("Mul", {"rot", "sin"}, "rs");
  b.op("Add", {"xc", "rs"}, "y");
  b.output("y", {3, 5, 8});
  return b.graph();
}

TEST(TorchExport, RotateHalfSplitsHeadDimIntoTwoFixedHalves) {
  const ir::Graph spec = rope_program("spec.onnx");
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  for (const std::string v : {"x", "cos", "sin"}) {
    const reduce::ReducedDim* d = dim_row(r, v, v == "x" ? 2 : 1);
    ASSERT_TRUE(d);
    EXPECT_EQ(full_and_reduced(d), (Fs{{2, 2}, {4, 2}})) << v;
    EXPECT_NE(d->factors[0].why, "") << v;  // the two halves are a count
    EXPECT_EQ(d->factors[1].why, "") << v;
  }
  EXPECT_EQ(declared_shape(r.spec, "x"), (std::vector<int64_t>{2, 2, 4}));

  // The halves are cut at the reduced half.
  EXPECT_EQ(operand_ints(r.spec, "x1", 1), (std::vector<int64_t>{0}));
  EXPECT_EQ(operand_ints(r.spec, "x1", 2), (std::vector<int64_t>{2}));
  EXPECT_EQ(operand_ints(r.spec, "x2", 1), (std::vector<int64_t>{2}));
  const auto end2 = operand_ints(r.spec, "x2", 2);
  ASSERT_TRUE(end2 && end2->size() == 1);
  EXPECT_GE(end2->at(0), 4);
  auto run = run_alone(r.spec);
  EXPECT_EQ(run->at("x1").shape, (ir::Shape{2, 2, 2}));
  EXPECT_EQ(run->at("x2").shape, (ir::Shape{2, 2, 2}));
  // rot[0, 0, 0] = -x[0, 0, 2] and rot[0, 0, 2] = x[0, 0, 0].
  EXPECT_EQ(run->at("rot").data[0], run->ctx.neg(run->sym("x", 2)));
  EXPECT_EQ(run->at("rot").data[2], run->sym("x", 0));
}

// x[..., 2:4] of 8: the offset 2 must stay a boundary, so the four quarters keep their count.
TEST(TorchExport, SliceOffsetKeepsTheCountAboveIt) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 8});
  b.op("Slice", {"x", b.ints("s", {2}), b.ints("e", {4}), b.ints("a", {1})}, "y");
  b.output("y", {3, 2});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const reduce::ReducedDim* d = dim_row(*o.reduced, "x", 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(full_and_reduced(d), (Fs{{4, 4}, {2, 2}}));
  EXPECT_NE(d->factors.at(0).why, "");
  EXPECT_EQ(operand_ints(o.reduced->spec, "y", 1), (std::vector<int64_t>{2}));
  EXPECT_EQ(operand_ints(o.reduced->spec, "y", 2), (std::vector<int64_t>{4}));
}

// x.repeat(z.shape[0], 1): the repeats are read from a shape. The repeat count keeps its full
// size (a Tile's repeats are a count), so the reduced program must repeat that many times.
// Tile's repeats are counts: computed from z's shape, they must keep their full value (4) in
// the reduced program, not be recomputed from z's reduced shape (2).
TEST(TorchExport, TileRepeatsReadFromAShapeKeepTheirCount) {
  GraphBuilder b("spec.onnx");
  b.input("x", {1, 6});
  b.input("z", {4, 6});
  b.op("Concat", {b.shape_entry("z", 0), b.ints("one", {1})}, "reps", {{"axis", int_attr(0)}});
  b.op("Tile", {"x", "reps"}, "t");
  b.op("Add", {"x", "z"}, "u");
  b.output("t", {4, 6});
  b.output("u", {4, 6});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;
  const std::vector<int64_t> declared = declared_shape(r.spec, "t");
  ASSERT_EQ(declared.size(), 2u);
  EXPECT_EQ(declared[0], 4);  // the count of repeats
  std::unique_ptr<GraphRun> run;
  EXPECT_NO_THROW(run = run_alone(r.spec));
  if (run) EXPECT_EQ(run->at("t").shape, (ir::Shape(declared.begin(), declared.end())));
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

TEST(TorchExport, RotateHalfSignBugStaysVisible) {
  const ir::Graph spec = rope_program("spec.onnx");
  PlanBuilder p;
  const int64_t r = p.rank(p.program(rope_program("rank0.onnx", /*sign_on_wrong_half=*/true)));
  for (const char* v : {"x", "cos", "sin", "y"}) p.bind(r, v, v);
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{"y"});
  Outcome good = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(good.reduced) << good.why;
  EXPECT_EQ(differing_outputs(good.reduced->spec, good.reduced->plan), std::vector<std::string>{});
}

}  // namespace
}  // namespace onnx_tv::reduce::test
