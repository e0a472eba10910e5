// Outcomes as bytes between processes (check/outcome_wire.h): every field comes back as it
// went, names from input files byte for byte, and errors as the kind they were raised as.
#include "check/outcome_wire.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace onnx_tv::check {
namespace {

InstanceOutcome full_outcome() {
  InstanceOutcome o;
  o.instance = 3;
  o.again = true;
  CheckResult& r = o.result;
  r.verdict = Verdict::NotEquivalent;
  r.message = "why";
  Mismatch m;
  m.spec_output = std::string("grad_\xff\x01", 7);  // not UTF-8: a name as the file holds it
  m.region_start = {0, 1};
  m.region_end = {2, 3};
  m.element = {1, 2};
  m.full_element = std::vector<int64_t>{5, 6};
  m.binding = "plan.json bindings[4]";
  m.partial = true;
  m.ranks = {1, 7};
  m.rank_value = "g@rank1 + g@rank7";
  m.witness = {{"x[0,1]", "-1/3", "x[0,9]"}, {"y", "2", ""}};
  m.spec_number = "1";
  m.plan_number = "2";
  m.spec_expr = "x";
  m.plan_expr = "2*x";
  m.spec_node = NodeRef{"spec.onnx", -1, "/a/MatMul", "MatMul", "t"};
  m.rank_node = NodeRef{"rank1.onnx", 1, "/b/Mul", "Mul", "u"};
  r.mismatch = m;
  r.failing_outputs = {"grad_x", "loss"};
  r.warnings = {"w"};
  CheckStats& s = r.stats;
  s.ranks = 8, s.spec_nodes = 9, s.rank_nodes = 10, s.collectives = 11, s.bindings = 12;
  s.elements_compared = 13, s.max_terms = 14, s.atoms = 15, s.polynomials = 16;
  s.staged = true, s.sat_coefficients = 17, s.sat_routings = 18, s.sat_max_variables = 19;
  s.sat_max_clauses = 20, s.sat_calls = 21, s.sat_seconds = 0.25, s.seconds = 1.5;
  s.processes = 3, s.process_instances = {2, 1, 1};
  Reduction& d = r.reduction;
  d.requested = false, d.applied = true, d.not_applied = "n";
  d.dims = {{"x", 1, 8, 2, {{4, 2, ""}, {2, 1, "why"}}}};
  d.other_dims = {{"y", 0, 4, 2, {}}};
  d.kept_full = {"k"};
  d.full_elements = 100, d.reduced_elements = 10;
  d.fewer_ranks = {"mesh axis 'dp': 4 ranks -> 2 and 3"};
  d.fewer_rank_axes = {"dp"};
  d.rank_origin = {0, 1, 3};
  d.fewer_micro_batches = "4 per program -> 2 and 3";
  o.kept.mesh_axes = {{"tp", "t"}};
  o.kept.every_rank = "e";
  o.kept.micro_batches = "m";
  o.kept.shape_reduction = "s";
  o.kept.counted_sums = {{"c", "d"}};
  o.error_kind = "input";
  o.error_message = "bad";
  return o;
}

TEST(OutcomeWire, EveryFieldComesBackAsItWent) {
  const std::vector<InstanceOutcome> sent{full_outcome(), InstanceOutcome{}};
  const std::vector<InstanceOutcome> got = decode_outcomes(encode_outcomes(sent));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0] == sent[0]);
  EXPECT_TRUE(got[1] == sent[1]);
  EXPECT_EQ(got[0].result.mismatch->spec_output, std::string("grad_\xff\x01", 7));
  EXPECT_FALSE(got[1].result.mismatch);
  EXPECT_TRUE(decode_result(encode_result(sent[0].result)) == sent[0].result);
}

TEST(OutcomeWire, BytesThatAreNoOutcomeAreABug) {
  EXPECT_THROW(decode_outcomes("not cbor"), InternalError);
}

template <class E>
void round_trip(const E& error) {
  std::string kind, message;
  describe_error(std::make_exception_ptr(error), kind, message);
  EXPECT_EQ(message, error.message());
  try {
    std::rethrow_exception(error_from(kind, message));
  } catch (const E& back) {
    EXPECT_EQ(typeid(back), typeid(E)) << kind;
    EXPECT_EQ(back.message(), error.message());
    return;
  } catch (...) {
  }
  ADD_FAILURE() << "not rethrown as its kind: " << kind;
}

TEST(OutcomeWire, ErrorsComeBackAsTheirKind) {
  round_trip(InputError("i"));
  round_trip(MathError("m"));
  round_trip(Unsupported("u"));
  round_trip(ResourceLimit("r"));
  round_trip(NotApplicable("n"));
  round_trip(InternalError("b"));
  round_trip(Error("e"));
}

}  // namespace
}  // namespace onnx_tv::check
