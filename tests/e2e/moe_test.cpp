// A Mixture-of-Experts layer routed by TopK (models/moe, tools/examples/make_moe.py): every rank
// routes every token, so the spec's TopK and each rank's are one selection of one canonical row
// (solver/selections.cpp), and experts split over 2 or 4 ranks prove, reduced and at full size.
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

CliRun check(const std::string& plan, const std::string& mode = "") {
  return check_model("moe", plan, mode);
}

TEST(Moe, ExpertsSplitOverTwoAndFourRanksAreProven) {
  // ep2_scatter makes the gates as torch does: the top-k weights scattered into zeros.
  for (const char* mode : {"", " --no-reduce"})
    for (const char* plan : {"ep2", "ep4", "ep2_scatter"}) {
      CliRun r = check(plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
}

TEST(Moe, TheExpertAxisKeepsItsSizeAndTokensShrink) {
  CliRun r = check("ep2");
  EXPECT_NE(r.out.find("TopK node '/router/TopK' selects along it (size 4)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x: [4,2] -> [2,2]"), std::string::npos) << r.out;
}

TEST(Moe, CombineWeightsFromTheFullSoftmaxAreRefuted) {
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check("ep2_full_softmax", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("first diverging operator, spec: /router/Softmax [Softmax]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first diverging operator, plan: /router/Softmax_all"), std::string::npos) << r.out;
  }
}

TEST(Moe, ARankCombiningAnotherExpertsGatesIsRefuted) {
  CliRun r = check("ep2_offset");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first diverging operator, plan: /combine/AllReduce"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
