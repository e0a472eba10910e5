// Constants along reduced dimensions: a non-uniform table (RoPE's cos) becomes a symbolic input
// of the reduced programs, each rank's table bound to the region of the spec's table it equals
// at full size; a rank table equal to no region keeps its dimensions full size; a uniform
// constant is refilled at the reduced shape.
#include "reduce_test_util.h"

namespace onnx_tv::reduce::test {
namespace {

// cos[s, j] for positions [first, first + rows), 4 columns: distinct values everywhere.
ir::ConstTensor cos_rows(int64_t first, int64_t rows) {
  std::vector<double> v;
  for (int64_t s = first; s < first + rows; ++s)
    for (int64_t j = 0; j < 4; ++j) v.push_back(double(10 * s + j + 1) / 64);
  return float_tensor({rows, 4}, v);
}

// y = x * cos over a sequence of `rows` positions starting at `first`.
ir::Graph rope_scale(const std::string& file, int64_t first, int64_t rows, bool as_constant_node) {
  GraphBuilder b(file);
  b.input("x", {rows, 4});
  if (as_constant_node) b.constant("cos", cos_rows(first, rows));
  else b.initializer("cos", cos_rows(first, rows));
  b.op("Mul", {"x", "cos"}, "y");
  b.output("y", {rows, 4});
  return b.graph();
}

// Context parallel over two ranks: rank r holds positions [4r, 4r + 4) of 8 and a table of
// rows [table_first[r], table_first[r] + 4). Rank 1 writes its table as a Constant node.
ir::Plan context_parallel(const std::vector<int64_t>& table_first) {
  PlanBuilder p;
  for (int64_t r = 0; r < 2; ++r) {
    p.rank(p.program(rope_scale("rank" + std::to_string(r) + ".onnx", table_first[size_t(r)], 4,
                                /*as_constant_node=*/r == 1)));
    p.bind(r, "x", "x", std::vector{span(4 * r, 4 * r + 4), whole});
    p.bind(r, "y", "y", std::vector{span(4 * r, 4 * r + 4), whole});
  }
  return p.plan();
}

TEST(ConstantTable, RankTableIsBoundToItsReducedRegion) {
  const ir::Graph spec = rope_scale("spec.onnx", 0, 8, false);
  Outcome o = reduce_of(spec, context_parallel({0, 4}));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  EXPECT_EQ(full_and_reduced(dim_row(r, "x", 0)), (Fs{{2, 2}, {4, 2}}));
  EXPECT_EQ(full_and_reduced(dim_row(r, "x", 1)), (Fs{{4, 2}}));
  // The spec's table is a symbolic input at the reduced shape.
  EXPECT_EQ(r.spec.initializers.count("cos"), 0u);
  ASSERT_TRUE(is_input(r.spec, "cos"));
  EXPECT_EQ(declared_shape(r.spec, "cos"), (std::vector<int64_t>{4, 2}));
  // So is each rank's, bound to the rows it equals: rank 1 holds rows [4, 8) of 8, which are
  // rows [2, 4) of the reduced 4.
  for (int64_t rank = 0; rank < 2; ++rank) {
    const ir::Graph& g = r.plan.program_of(rank);
    EXPECT_EQ(g.initializers.count("cos"), 0u) << rank;
    for (const auto& n : g.nodes) EXPECT_NE(n.outputs.at(0), "cos") << rank << ": " << n.op_type;
    ASSERT_TRUE(is_input(g, "cos")) << rank;
    EXPECT_EQ(declared_shape(g, "cos"), (std::vector<int64_t>{2, 2})) << rank;
    const ir::Binding* b = binding_of(r.plan, rank, "cos");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->spec, "cos");
    EXPECT_EQ(spans(*b), (std::vector<Span>{{2 * rank, 2 * rank + 2}, {0, 2}})) << rank;
  }
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{});
}

// Rank 1 uses rows [3, 7) (an off-by-one RoPE offset): equal to no region of the spec's table.
TEST(ConstantTable, RankTableEqualToNoRegionKeepsItsDimensionsFullSize) {
  const ir::Graph spec = rope_scale("spec.onnx", 0, 8, false);
  Outcome o = reduce_of(spec, context_parallel({0, 3}));
  ASSERT_TRUE(o.reduced) << o.why;
  const Reduced& r = *o.reduced;

  for (int64_t axis : {0, 1}) {
    const reduce::ReducedDim* d = dim_row(r, "x", axis);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->reduced, d->full) << axis;
  }
  const reduce::ReducedDim* cols = dim_row(r, "x", 1);
  ASSERT_TRUE(cols);
  EXPECT_NE(cols->factors.at(0).why.find("cos"), std::string::npos) << cols->factors.at(0).why;
  // Rank 1 keeps its table as written, at full size.
  const ir::Graph& g = r.plan.program_of(1);
  EXPECT_FALSE(is_input(g, "cos"));
  const ir::Node* c = producer(g, "cos");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->op_type, "Constant");
  EXPECT_EQ(c->attribute("value")->tensor->reals, cos_rows(3, 4).reals);
  EXPECT_EQ(declared_shape(g, "x"), (std::vector<int64_t>{4, 4}));
  // And the offset bug is still there to find.
  EXPECT_EQ(differing_outputs(r.spec, r.plan), std::vector<std::string>{"y"});
}

// The spec holds positions as a folded constant (as an export folds a RoPE cache or a causal
// mask for a fixed sequence length); the rank computes the same values with Range. The plan
// is equivalent at full size, and the reduced instance must say so too.
// A spec table no rank table is bound to (the rank computes the same positions with Range)
// must keep its dimensions full size: a free symbolic table would differ from the rank's
// recomputed positions, a NOT EQUIVALENT that the real plan does not have.
TEST(ConstantTable, SpecTableThatARankComputesKeepsTheVerdict) {
  constexpr int64_t kSeq = 128;  // above the size up to which Range is evaluated exactly
  GraphBuilder s("spec.onnx");
  s.input("x", {kSeq, 4});
  std::vector<double> positions;
  for (int64_t i = 0; i < kSeq; ++i) positions.push_back(double(i));
  s.initializer("pos", float_tensor({kSeq, 1}, positions));
  s.op("Mul", {"x", "pos"}, "y");
  s.output("y", {kSeq, 4});
  const ir::Graph spec = s.graph();

  GraphBuilder g("rank0.onnx");
  g.input("x", {kSeq, 4});
  g.op("Range", {g.ints("start", {0}, true), g.ints("limit", {kSeq}, true), g.ints("delta", {1}, true)},
       "r");
  g.op("Cast", {"r"}, "rf", {{"to", int_attr(int64_t(ir::DType::Float))}});
  g.op("Unsqueeze", {"rf", g.ints("axes", {1})}, "pos");
  g.op("Mul", {"x", "pos"}, "y");
  g.output("y", {kSeq, 4});
  PlanBuilder p;
  p.rank(p.program(g.graph()));
  p.bind(0, "x", "x");
  p.bind(0, "y", "y");

  ASSERT_EQ(differing_outputs(spec, p.plan()), std::vector<std::string>{});  // at full size
  Outcome o = reduce_of(spec, p.plan());
  ASSERT_TRUE(o.reduced) << o.why;
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

// Context-parallel positions computed in the graph: rank r counts from its offset, so the
// offsets become offsets in reduced blocks, and a rank that forgets its offset still differs.
TEST(ConstantTable, ComputedPositionsFollowTheContextParallelOffset) {
  auto positions = [](const std::string& file, int64_t first, int64_t n) {
    GraphBuilder b(file);
    b.input("x", {n, 4});
    b.op("Range", {b.ints("start", {first}, true), b.ints("limit", {first + n}, true),
                   b.ints("delta", {1}, true)},
         "r");
    b.op("Cast", {"r"}, "rf", {{"to", int_attr(int64_t(ir::DType::Float))}});
    b.op("Unsqueeze", {"rf", b.ints("axes", {1})}, "pos");
    b.op("Mul", {"x", "pos"}, "y");
    b.output("y", {n, 4});
    return b.graph();
  };
  const ir::Graph spec = positions("spec.onnx", 0, 256);
  for (bool forgets_offset : {false, true}) {
    PlanBuilder p;
    for (int64_t r = 0; r < 2; ++r) {
      const int64_t first = forgets_offset ? 0 : 128 * r;
      p.rank(p.program(positions("rank" + std::to_string(r) + ".onnx", first, 128)));
      p.bind(r, "x", "x", std::vector{span(128 * r, 128 * r + 128), whole});
      p.bind(r, "y", "y", std::vector{span(128 * r, 128 * r + 128), whole});
    }
    Outcome o = reduce_of(spec, p.plan());
    ASSERT_TRUE(o.reduced) << o.why;
    const Reduced& r = *o.reduced;
    EXPECT_EQ(full_and_reduced(dim_row(r, "x", 0)), (Fs{{2, 2}, {128, 2}}));
    if (!forgets_offset) {
      // Rank 1 counts from 128 of 256, which is 2 of the reduced 4.
      EXPECT_EQ(operand_ints(r.plan.program_of(1), "r", 0), (std::vector<int64_t>{2}));
      EXPECT_EQ(operand_ints(r.plan.program_of(1), "r", 1), (std::vector<int64_t>{4}));
    }
    EXPECT_EQ(differing_outputs(r.spec, r.plan),
              forgets_offset ? std::vector<std::string>{"y"} : std::vector<std::string>{})
        << forgets_offset;
  }
}

// A uniform constant (a zero bias along the hidden axis) is refilled at the reduced shape.
TEST(ConstantTable, UniformConstantIsRefilled) {
  GraphBuilder b("spec.onnx");
  b.input("x", {3, 6});
  b.initializer("bias", float_tensor({6}, std::vector<double>(6, 0.5)));
  b.op("Add", {"x", "bias"}, "y");
  b.output("y", {3, 6});
  const ir::Graph spec = b.graph();
  Outcome o = reduce_of(spec, identity_plan(spec));
  ASSERT_TRUE(o.reduced) << o.why;
  const auto it = o.reduced->spec.initializers.find("bias");
  ASSERT_NE(it, o.reduced->spec.initializers.end());
  EXPECT_EQ(it->second.shape, (ir::Shape{2}));
  EXPECT_EQ(it->second.reals, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(differing_outputs(o.reduced->spec, o.reduced->plan), std::vector<std::string>{});
}

}  // namespace
}  // namespace onnx_tv::reduce::test
