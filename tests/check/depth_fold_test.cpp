// Leaving out the inside of a run of layers (fold/depth_fold.h) on the zoo's Llama plan, read
// from files as the check reads it: the plan left links and binds, and a layer that differs
// from the layer kept for it in one rank program's constant, in one rank's bindings or in one
// collective's group is kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "check/bindings.h"
#include "check/stage_partition.h"
#include "exec/linker.h"
#include "fold/depth_fold.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"

namespace onnx_tv::check {
namespace {

namespace fs = std::filesystem;

// tools/zoo/generate.py --real-plan 8b_dp2_tp2_pp2_mb2 --layers 12 into a folder of this
// test's own, then tools/zoo/change_layer.py `change` on it (CHANGE DIR LAYER ...: `dir` is
// put in).
fs::path generate(const std::string& change = "", const std::string& args = "") {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("onnx_tv_depth_fold_" + test);
  fs::remove_all(dir);
  std::string cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR +
                    "/tools/zoo/generate.py --real-plan 8b_dp2_tp2_pp2_mb2 --layers 12 --out " +
                    dir.string() + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  if (!change.empty()) {
    cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR + "/tools/zoo/change_layer.py " +
          change + " " + dir.string() + " " + args;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  return dir;
}

struct Left {
  std::optional<fold::Folded> folded;
  std::string why_not;
  // Whether the plan left still holds this spec parameter.
  bool holds(const std::string& param) const {
    for (const auto& vi : folded->spec.inputs)
      if (vi.name == param) return true;
    return false;
  }
};

Left fold_of(const fs::path& dir) {
  const ir::Graph spec = frontend::load_model((dir / "spec.onnx").string());
  const ir::Plan plan = frontend::load_plan((dir / "plan").string());
  const BoundPlan bound = resolve_bindings(spec, plan, 0);
  fold::FoldInputs in;
  in.spec = &spec;
  in.plan = &plan;
  in.spec_params = spec_parameters(spec, bound);
  Left l;
  l.folded = fold::fold_depth(in, l.why_not);
  if (l.folded) {  // the plan left links and binds
    (void)exec::link_plan(l.folded->plan, 0);
    (void)resolve_bindings(l.folded->spec, l.folded->plan, 0);
  }
  return l;
}

// Twelve layers in two pipeline stages of six. The run's layers start at a layer's MLP norm (the
// start that leaves out the most); in each stage the first two of the run's layers alike are
// kept and the rest left out (from layer 2's MLP to layer 5's attention in the first).
TEST(DepthFold, LlamaPlanLeavesOutTheInsideOfEachStage) {
  const Left l = fold_of(generate());
  ASSERT_TRUE(l.folded) << l.why_not;
  EXPECT_GE(l.folded->removed, 4);
  EXPECT_EQ(l.folded->pairs.size(), 2u);
  EXPECT_TRUE(l.holds("layers.2.w_q"));
  // What the tests below change, left out here.
  for (const char* p : {"layers.4.w_k", "layers.4.w_o", "layers.4.w_gate"}) EXPECT_FALSE(l.holds(p)) << p;
}

// Layer 4's attention scale differs in every rank program: the layer of the run holding the
// scores (the stage of w_k, where they are computed) is kept.
TEST(DepthFold, ALayerWithAnotherConstantIsKept) {
  const Left l = fold_of(generate("scale", "4"));
  ASSERT_TRUE(l.folded) << l.why_not;
  EXPECT_TRUE(l.holds("layers.4.w_k"));
}

// Layer 4's attention scale differs in the spec alone: the spec's layers are cut where the
// programs' are, and the one holding the scores is kept there too.
TEST(DepthFold, ASpecLayerWithAnotherConstantIsKept) {
  const fs::path dir = generate("scale", "4 --spec");
  const Left l = fold_of(dir);
  ASSERT_TRUE(l.folded) << l.why_not;
  EXPECT_TRUE(l.holds("layers.4.w_k"));
}

// Rank 0 reads layer 4's gate and up weights the other way round: the layer of the run holding
// them is kept.
TEST(DepthFold, ALayerBoundOtherwiseIsKept) {
  const Left l = fold_of(generate("swap", "4 0 w_gate w_up"));
  ASSERT_TRUE(l.folded) << l.why_not;
  EXPECT_TRUE(l.holds("layers.4.w_gate"));
}

// Layer 4's tensor-parallel all-reduce after the attention lists its two members the other
// way round (a valid plan, whose sums run in another order): the layer holding it is kept.
TEST(DepthFold, ALayerWithAnotherCollectiveGroupIsKept) {
  const Left l = fold_of(generate("regroup", "4"));
  ASSERT_TRUE(l.folded) << l.why_not;
  EXPECT_TRUE(l.holds("layers.4.w_o"));
}

}  // namespace
}  // namespace onnx_tv::check
