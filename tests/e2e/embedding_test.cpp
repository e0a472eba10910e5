// Embedding lookups by int64 token ids (models/embedding, tools/examples/make_embedding.py):
// ids are modeled by their indicators, so a lookup, the masks of a vocabulary-parallel
// embedding and their Where are exact, reduced and at full size.
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

std::string path(const std::string& part) {
  return (source_dir() / "models/embedding" / part).string();
}

CliRun check(const std::string& plan, const std::string& mode = "") {
  return check_model("embedding", plan, mode);
}

TEST(Embedding, DataAndVocabularyParallelLookupsAreProven) {
  for (const char* mode : {"", " --no-reduce"})
    for (const char* plan : {"dp2", "tp2_vocab"}) {
      CliRun r = check(plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
}

TEST(Embedding, TheVocabularyKeepsItsSizeAndTheReportSaysWhichRangeWasAssumed) {
  CliRun r = check("dp2");
  EXPECT_NE(r.out.find("Gather node '/embed/Gather' picks elements along it (size 16)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: integer input 'ids' of " + path("spec.onnx") +
                       " is taken to range over [0, 16): it indexes Gather node '/embed/Gather'"),
            std::string::npos) << r.out;
}

TEST(Embedding, ARankInputOfAnotherKindIsAnInputError) {
  CliRun r = check("dp2_float_ids");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("rank input 'ids_local' of"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is float and spec input 'ids' is int64"), std::string::npos) << r.out;
}

TEST(Embedding, AWrongOffsetIsRefutedAtATokenId) {
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check("tp2_vocab_off_by_one", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    // The witness names a token id, and the first diverging operator is the rank's mask.
    EXPECT_NE(r.out.find("ids["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("/embed/GreaterOrEqual"), std::string::npos) << r.out;
  }
}

TEST(Embedding, RowsOutsideARanksShardMustBeZeroed) {
  CliRun r = check("tp2_vocab_unmasked");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
