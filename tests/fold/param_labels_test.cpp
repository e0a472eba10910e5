// Parameter stages (fold/param_labels.h): where the forward, head and backward of each
// parameter's computation lie, on units and on a graph.
#include <gtest/gtest.h>

#include "fold/param_labels.h"

namespace onnx_tv::fold {
namespace {

// Forward values take the stage of the last parameter read upstream, backward ones the stage
// of the last read downstream; the head and the loss are between.
TEST(StagePartition, ForwardThenHeadThenBackwardInReverse) {
  // f0 reads p0; f1 reads f0, p1; head reads f1, p2; b1 (a gradient through p1) reads head,
  // p1; b0 reads b1, p0; g0 (p0's gradient) reads b0 and f0.
  std::vector<LabelUnit> units(6);
  units[0] = {{}, 0};
  units[1] = {{0}, 1};
  units[2] = {{1}, 2};
  units[3] = {{2}, 1};
  units[4] = {{3}, 0};
  units[5] = {{4, 0}, -1};
  const std::vector<int64_t> label = label_units(units, 3);
  EXPECT_EQ(label, (std::vector<int64_t>{1, 2, 4, 6, 7, 7}));
}

}  // namespace
}  // namespace onnx_tv::fold
