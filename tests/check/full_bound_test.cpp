// FullBound: the full plan's bindings are resolved (and their errors raised) as the plan is
// read; let go, they are resolved again when an instance keeping every rank asks for them.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "check/full_bound.h"
#include "common/errors.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"

namespace onnx_tv::check {
namespace {

namespace fs = std::filesystem;
const fs::path kExample = fs::path(ONNX_TV_SOURCE_DIR) / "models/examples/mlp_tp2";

TEST(FullBound, ResolvedAgainOnceLetGo) {
  const ir::Graph spec = frontend::load_model((kExample / "spec.onnx").string());
  const ir::Plan plan = frontend::load_plan((kExample / "shards").string());
  FullBound full(spec, plan, 0);
  const size_t n = full.get().bindings.size();
  ASSERT_EQ(n, plan.bindings.size());
  full.let_go();
  const BoundPlan& again = full.get();
  ASSERT_EQ(again.bindings.size(), n);
  for (size_t k = 0; k < n; ++k) EXPECT_EQ(again.bindings[k].binding, &plan.bindings[k]) << k;
  EXPECT_EQ(&full.get(), &again) << "resolved a second time without being let go";
}

TEST(FullBound, ABindingsErrorIsRaisedAsThePlanIsRead) {
  const ir::Graph spec = frontend::load_model((kExample / "spec.onnx").string());
  ir::Plan plan = frontend::load_plan((kExample / "shards").string());
  ASSERT_FALSE(plan.bindings.empty());
  plan.bindings[1].spec = "no_such_value";
  try {
    FullBound full(spec, plan, 0);
    FAIL() << "a binding of a value the spec does not have was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_value"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onnx_tv::check
