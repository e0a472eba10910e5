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

TEST(Moe, ARoutingMapProvesByTheSlotRule) {
  // Megatron's probs * routing_map, the map made by scattering ones at the selected experts:
  // the map is 0/1 (Cast to bool) and the product is the gates only because no expert is in two
  // slots, a rule of the canonical form ([s_0 = e][s_1 = e] = 0, solver/indicators.cpp). The
  // map cast to bool is a count of the slots, whose coefficients CaDiCaL shows vanish as they
  // are: no term is rewritten under a routing. The Or form agrees likewise.
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check("ep2_routing_map", mode);
    EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find(" 0 term(s) rewritten under their routing"), std::string::npos) << r.out;
    r = check("ep4_or_map", mode);
    EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.out;
  }
}

TEST(Moe, ARoutingMapMissingASlotIsRefuted) {
  // The map of slot 0 alone times the gates is slot 0's one-hot times its weight, a value the
  // spec computes too (its gates are the sum of those over the slots): valid values in the
  // wrong place, located where they first meet the combine (design.md, "Known gaps").
  for (const char* mode : {"", " --no-stages"}) {
    CliRun r = check("ep2_map_first_slot", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first diverging operator, plan: /combine/Transpose"), std::string::npos)
        << mode << "\n" << r.out;
  }
}

TEST(Moe, AllToAllDispatchIsProvenPaddedDenseAndWithACapacity) {
  // Tokens split over the ranks and sent to their experts' ranks by AllToAll: one buffer slot
  // per token (a2a2_padded: the expert applied to a masked slot is the expert applied to the
  // token only where the routing sends the token there, which the function's cases decide),
  // every token (a2a2_dense), or GShard's place = CumSum of the routing mask, a count whose
  // definition CaDiCaL knows (a2a2_capacity).
  for (const char* mode : {"", " --no-reduce"})
    for (const char* plan : {"a2a2_padded", "a2a2_dense", "a2a2_capacity", "a2a2_triangular"}) {
      CliRun r = check(plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
  CliRun r = check("a2a2_capacity");
  EXPECT_NE(r.out.find("proven to vanish by CaDiCaL"), std::string::npos) << r.out;
  // The expert on a padded slot is the expert on the token case by case, as relu is built
  // (solver/exclusive_cases.cpp): no routing is left to rewrite.
  r = check("a2a2_padded");
  EXPECT_EQ(r.out.find("routing axioms: "), std::string::npos) << r.out;
}

TEST(Moe, ACapacityCountedPerRankDropsTokensAndIsRefuted) {
  // The capacity of a2a2_capacity_per_rank is the rank's tokens divided by the ranks: a rank's
  // second token routed to an expert its first token took has no slot. The witness routes both
  // tokens of rank 0 alike (all scores 0: ties go to the lower experts).
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check("a2a2_capacity_per_rank", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("plan value:    y@rank0"), std::string::npos) << r.out;
  }
}

TEST(Moe, ACountOfRoutedTokensKeepsTheTokenAxisWhole) {
  // models/moe8: 4 tokens per rank, places by a triangular MatMul, capacity 3: a token is
  // dropped only where all 4 share an expert, which a reduced instance of 2 tokens per rank
  // would never show. The token axis keeps its size, so the reduced check refutes it too. A
  // capacity of 4 proves: a token's place is then a count over three earlier tokens, decided
  // where each term is rewritten under its own routing.
  for (const char* mode : {"", " --no-reduce"}) {
    for (const char* plan : {"a2a2_capacity", "a2a2_triangular"}) {
      CliRun r = check_model("moe8", plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
    CliRun r = check_model("moe8", "a2a2_triangular_short", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
  }
  CliRun r = check_model("moe8", "a2a2_triangular_short");
  EXPECT_NE(r.out.find("x: [8,2] -> [8,2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cast node '/dispatch/Cast' reads a count of routing data along it"),
            std::string::npos) << r.out;
}

TEST(Moe, ACountReadThroughAnIntegerDivisionKeepsTheTokenAxisWhole) {
  // models/moe8_tanh: a token is dropped where its place // capacity is 1; Tanh experts (not
  // piecewise) would not keep the axis. Capacity 4 of 4 tokens per rank drops none (proven),
  // capacity 3 drops one where all 4 share an expert, which 2 tokens per rank never do.
  for (const char* mode : {"", " --no-reduce"}) {
    CliRun r = check_model("moe8_tanh", "a2a2_drop", mode);
    EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.out;
    r = check_model("moe8_tanh", "a2a2_drop_short", mode);
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out;
  }
  CliRun r = check_model("moe8_tanh", "a2a2_drop_short");
  EXPECT_NE(r.out.find("x: [8,2] -> [8,2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cast node '/dispatch/Cast' reads a count of routing data along it"),
            std::string::npos) << r.out;
}

TEST(Moe, TopTwoOfEightExpertsProvesAndItsBugsAreRefuted) {
  // models/moe_e8: 8 experts, top 2: tokens replicated over 2 and 4 ranks, Megatron's routing
  // map, the padded AllToAll dispatch and GShard's capacity dispatch; a rank combining its
  // neighbour's gates, combine weights from the softmax over all scores and a capacity counted
  // per rank are refuted.
  for (const char* mode : {"", " --no-reduce"}) {
    for (const char* plan : {"ep2", "ep4", "ep2_routing_map", "a2a2_padded", "a2a2_capacity",
                             "a2a2_triangular"}) {
      CliRun r = check_model("moe_e8", plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
    for (const char* plan : {"ep2_offset", "ep2_full_softmax", "a2a2_capacity_per_rank"}) {
      CliRun r = check_model("moe_e8", plan, mode);
      EXPECT_EQ(r.exit_code, 1) << plan << mode << "\n" << r.out;
      EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
    }
  }
  CliRun r = check_model("moe_e8", "ep2");
  EXPECT_NE(r.out.find("TopK node '/router/TopK' selects along it (size 8)"), std::string::npos) << r.out;
}

TEST(Moe, UnsortedTopKProvesWhereTheOrderDoesNotMatter) {
  // sorted=0 leaves the order of the k results to the runtime: each such node's slots are a
  // permutation of the sorted top k, its own. Gates summed over the slots, and places counted
  // from the routing mask, do not depend on it; weights from an unsorted TopK paired with
  // experts from a sorted one do, and the reversed order the runtime may give makes them wrong
  // (tests/zoo/test_index_models.py): not proven, and the routing that parts them is named.
  for (const char* mode : {"", " --no-reduce"}) {
    for (const char* plan : {"ep2_unsorted", "a2a2_capacity_unsorted"}) {
      CliRun r = check(plan, mode);
      EXPECT_EQ(r.exit_code, 0) << plan << mode << "\n" << r.out;
    }
    CliRun r = check("ep2_unsorted_mixed", mode);
    EXPECT_EQ(r.exit_code, 3) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("of an unsorted TopK (its order left to the runtime)"), std::string::npos)
        << r.out;
  }
}

TEST(Moe, GatesOfAnotherExpertAfterAllToAllAreRefuted) {
  CliRun r = check("a2a2_wrong_gate");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("witness:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan value:    y@rank1"), std::string::npos) << r.out;  // rank 1 rolls them
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
