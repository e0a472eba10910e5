// The argsort dispatch of expert parallelism (models/moe/a2a2_argsort*, tools/examples/
// make_moe.py): each rank's (token, slot) pairs sorted by expert with a TopK over integer keys,
// gathered into padded buffers by counts of the routing, AllToAll, and unpermuted by the
// argsort of the order. The order is the rank of each pair's key (solver/ranked_selection.cpp),
// its argsort the inverse, and a gather through both meets the pair's own facts
// (solver/routing_prune.cpp), so the plan proves; the order applied twice is refuted.
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {
namespace {

CliRun check(const std::string& plan, const std::string& mode = "") {
  return check_model("moe", plan, mode);
}

TEST(MoeArgsort, TheArgsortPermutationIsProven) {
  for (const char* mode : {"", " --no-stages"}) {
    CliRun r = check("a2a2_argsort", mode);
    EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("proven to vanish by CaDiCaL"), std::string::npos) << r.out;
  }
}

TEST(MoeArgsort, TheOrderAppliedTwiceIsRefuted) {
  // torchtitan #1237: the combine gathers by the sort order again instead of its inverse. With
  // two tokens of two pairs per rank, an order that is not its own inverse routes a token's
  // second expert's output to another pair; the witness routes rank 0's tokens so.
  for (const char* mode : {"", " --no-stages"}) {
    CliRun r = check("a2a2_argsort_twice", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("plan value:    y@rank0"), std::string::npos) << r.out;
  }
}

TEST(MoeArgsort, TheTokensKeepTheirSize) {
  // The buffers' places are counts over a rank's pairs: with fewer tokens there are fewer pairs
  // and a buffer never fills, so the token axis keeps its size.
  CliRun r = check("a2a2_argsort");
  EXPECT_NE(r.out.find("x: [4,2] -> [4,2]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace onnx_tv::e2e
