// Training on token ids and integer labels (models/cross_entropy,
// tools/examples/make_cross_entropy.py): the embedding lookup, the cross-entropy picked by
// GatherElements, its backward through OneHot (spec) or a ScatterElements of ones (ranks, as
// torch writes it), and the embedding gradient as a scatter-add of rows, under data, sequence
// and vocabulary parallelism, reduced and at full size.
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

std::string path(const std::string& part) {
  return (source_dir() / "models/cross_entropy" / part).string();
}

CliRun check(const std::string& plan, const std::string& mode = "") {
  return check_model("cross_entropy", plan, mode);
}

TEST(CrossEntropy, DataSequenceAndVocabularyParallelTrainingStepsAreProven) {
  for (const char* mode : {"", " --no-reduce"})
    for (const char* plan : {"dp2", "sp2", "tp2_vocab"}) {
      CliRun r = check(plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
}

TEST(CrossEntropy, TheReportSaysWhatKeptItsSizeAndWhichRangesWereAssumed) {
  CliRun r = check("dp2");
  EXPECT_NE(r.out.find("GatherElements node '/loss/GatherElements' picks elements along it (size 8)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ScatterND node '/embed_bw/ScatterND' combines the updates that land on one "
                       "element"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("integer input 'labels' of " + path("spec.onnx") +
                       " is taken to range over [0, 8): it indexes OneHot node '/loss_bw/OneHot'"),
            std::string::npos) << r.out;
}

TEST(CrossEntropy, AnOffByOneVocabularyShardIsRefutedAtTheMask) {
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check("tp2_vocab_off_by_one", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("ids["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first diverging operator, plan: /embed/GreaterOrEqual"), std::string::npos)
        << r.out;
  }
}

TEST(CrossEntropy, TheEmbeddingGradientOfAnotherShardsIdsIsRefuted) {
  CliRun r = check("tp2_vocab_unmasked_grad");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("spec output:   'grad_W'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first diverging operator, spec: /embed_bw/ScatterND"), std::string::npos)
      << r.out;
}

TEST(CrossEntropy, ALocalMeanIsRefutedAtTheLoss) {
  CliRun r = check("dp2_local_mean");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("spec output:   'loss'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first diverging operator, plan: /loss/Mul"), std::string::npos) << r.out;
}

TEST(CrossEntropy, AnEmbeddingGradientNotAllReducedIsRefuted) {
  CliRun r = check("dp2_grad_w_not_reduced");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("spec output:   'grad_W'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first diverging operator, plan: /embed_bw/Identity_dW"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
