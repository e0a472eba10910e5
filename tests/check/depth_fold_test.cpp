// Leaving out the inside of a run of layers (fold/depth_fold.h) on the zoo's Llama plans, as
// the check meets them: spec and plan read from files, bindings resolved.
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

struct Loaded {
  ir::Graph spec;
  ir::Plan plan;
};

// tools/zoo/generate.py `args` into a folder of this test's own.
Loaded generate(const std::string& args) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("onnx_tv_depth_fold_" + test);
  fs::remove_all(dir);
  const std::string cmd = std::string("/usr/bin/python3 ") + ONNX_TV_SOURCE_DIR +
                          "/tools/zoo/generate.py " + args + " --out " + dir.string() +
                          " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return {frontend::load_model((dir / "spec.onnx").string()), frontend::load_plan((dir / "plan").string())};
}

std::optional<fold::Folded> fold(const Loaded& l, std::string& why_not) {
  const BoundPlan bound = resolve_bindings(l.spec, l.plan, 0);
  fold::FoldInputs in;
  in.spec = &l.spec;
  in.plan = &l.plan;
  in.spec_params = spec_parameters(l.spec, bound);
  return fold::fold_depth(in, why_not);
}

TEST(DepthFold, LlamaPlanLeavesOutTheInsideOfEachStage) {
  const Loaded l = generate("--real-plan 8b_dp2_tp2_pp2_mb2 --layers 12");
  std::string why_not;
  const auto f = fold(l, why_not);
  if (getenv("DBG")) {
    const BoundPlan bound = resolve_bindings(l.spec, l.plan, 0);
    auto sp = spec_parameters(l.spec, bound);
    auto labels = fold::label_graph(l.spec, sp.of, sp.count);
    auto t = fold::param_texts(l.spec, fold::node_stages(l.spec, labels, sp.count), sp, nullptr);
    for (int64_t p = 0; p < sp.count; ++p) {
      std::string name; for (auto& [n, q] : sp.of) if (q == p) name = n;
      std::cerr << "=== " << p << " " << name << " " << t.text[p].size() << "\n";
      if (std::string(getenv("DBG")) == name) std::cerr << t.text[p] << "\n";
    }
  }
  ASSERT_TRUE(f) << why_not;
  EXPECT_GT(f->removed, 0);
  std::cerr << "layers " << f->layers << " removed " << f->removed << " pairs " << f->pairs.size()
            << " spec nodes " << l.spec.nodes.size() << " -> " << f->spec.nodes.size() << "\n";
  for (const auto& p : f->pairs) std::cerr << "  pair " << p.before[0] << " " << p.after[0] << "\n";
  // The plan left links and binds.
  (void)exec::link_plan(f->plan, 0);
  (void)resolve_bindings(f->spec, f->plan, 0);
}

}  // namespace
}  // namespace onnx_tv::check
