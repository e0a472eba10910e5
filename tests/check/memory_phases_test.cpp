// --max-memory holds in every phase, not only while programs run: loading a file, linking
// the ranks and shape reduction each stop with ResourceLimit naming where they were. (The
// whole check under a tiny limit: tests/e2e/example_test.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "common/errors.h"
#include "exec/linker.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "reduce/mesh_axes.h"
#include "reduce/reduce.h"

namespace onnx_tv {
namespace {

namespace fs = std::filesystem;

const fs::path kZoo = fs::path(ONNX_TV_SOURCE_DIR) / "models/zoo/l1_b4_gqa";
constexpr size_t kOneByte = 1;  // below any process's resident memory

std::string stopped_at(const std::function<void()>& phase) {
  try {
    phase();
  } catch (const ResourceLimit& e) {
    return e.message();
  }
  return "(no limit reached)";
}

TEST(MemoryPhases, LoadingAModelStopsNamingTheFile) {
  frontend::LoadOptions o;
  o.memory_bytes = kOneByte;
  const std::string spec = (kZoo / "spec.onnx").string();
  const std::string msg = stopped_at([&] { frontend::load_model(spec, o); });
  EXPECT_NE(msg.find("was stopped at loading " + spec), std::string::npos) << msg;
}

TEST(MemoryPhases, LoadingAPlanStopsNamingARankFile) {
  const std::string msg =
      stopped_at([&] { frontend::load_plan((kZoo / "plans/dp2_mb2").string(), kOneByte); });
  EXPECT_NE(msg.find("was stopped at loading"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank0.onnx"), std::string::npos) << msg;
}

// The check is sampled every 256 calls, one per node: a plan of more nodes than that reaches
// it whatever the count left by earlier calls.
TEST(MemoryPhases, LinkingStopsNamingThePhase) {
  const ir::Plan plan = frontend::load_plan((kZoo / "plans/dp2_mb2").string());
  size_t nodes = 0;
  for (int64_t r = 0; r < plan.world_size; ++r) nodes += plan.program_of(r).nodes.size();
  ASSERT_GE(nodes, 256u);
  EXPECT_NO_THROW(exec::link_plan(plan));
  const std::string msg = stopped_at([&] { exec::link_plan(plan, kOneByte); });
  EXPECT_NE(msg.find("was stopped at linking the ranks"), std::string::npos) << msg;
}

TEST(MemoryPhases, ShapeReductionStopsNamingTheNode) {
  const ir::Graph spec = frontend::load_model((kZoo / "spec.onnx").string());
  const ir::Plan plan = frontend::load_plan((kZoo / "plans/dp2_mb2").string());
  size_t nodes = spec.nodes.size();  // inference visits the spec's and every rank's nodes
  for (int64_t r = 0; r < plan.world_size; ++r) nodes += plan.program_of(r).nodes.size();
  ASSERT_GE(nodes, 256u);
  const reduce::FewerRanks all = reduce::all_ranks(plan);
  const exec::LinkedPlan linked = exec::link_plan(plan);
  EXPECT_TRUE(reduce::reduce_plan(spec, all, linked, reduce::KeptWhole{}, 0).reduced);
  const std::string msg =
      stopped_at([&] { reduce::reduce_plan(spec, all, linked, reduce::KeptWhole{}, kOneByte); });
  EXPECT_NE(msg.find("was stopped at shape reduction, "), std::string::npos) << msg;
}

}  // namespace
}  // namespace onnx_tv
