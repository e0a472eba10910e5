#include "cli/progress_bar.h"

#include <gtest/gtest.h>

namespace onnx_tv::cli {
namespace {

TEST(ProgressLine, ShowsPhaseBarAndCount) {
  EXPECT_EQ(progress_line({"spec", 15, 30}, 0.2), "spec     [###############...............] 15/30");
}

TEST(ProgressLine, AddsRateAndTimeLeftOnceThePhaseHasRunAWhile) {
  // 100 of 400 steps in 2 s: 50 per second, 300 left take 6 s.
  EXPECT_EQ(progress_line({"plan", 100, 400}, 2.0),
            "plan     [#######.......................] 100/400  50/s  ~6s left");
  // Minutes and hours are written as such.
  EXPECT_NE(progress_line({"plan", 1, 200}, 2.0).find("~6m38s left"), std::string::npos);
  EXPECT_NE(progress_line({"plan", 1, 4000}, 2.0).find("~2h13m left"), std::string::npos);
}

TEST(ProgressLine, SlowUnitsAreTimedEach) {
  // 1 of 4 instances in 20 s: 20 s each, 3 left take a minute.
  EXPECT_EQ(progress_line({"instances", 1, 4}, 20.0),
            "instances [#######.......................] 1/4  20s each  ~1m00s left");
  EXPECT_NE(progress_line({"plan", 2, 10}, 3.0).find("  2s each  ~12s left"), std::string::npos);
}

TEST(ProgressLine, NoEstimateBeforeItSettlesNorWhenDoneNorWithoutProgress) {
  EXPECT_EQ(progress_line({"plan", 100, 400}, 0.5).find("left"), std::string::npos);
  EXPECT_EQ(progress_line({"plan", 400, 400}, 9.0).find("left"), std::string::npos);
  EXPECT_EQ(progress_line({"plan", 0, 400}, 9.0).find("left"), std::string::npos);
  EXPECT_EQ(progress_line({"load", 0, 0}, 9.0), "load     [..............................] 0/0");
}

}  // namespace
}  // namespace onnx_tv::cli
