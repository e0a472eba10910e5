// ONNX's own backend tests (Debian's libonnx-testdata, installed by tools/install-deps.sh) run
// through the prover's op semantics. The pass count is a floor, so a regression in any op
// fails here; raise it when ops are added.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/errors.h"
#include "eval/conformance.h"

namespace onnx_tv::eval {
namespace {

// Measured with ONNX 1.12's test data; tests/conformance is where to raise it.
constexpr int64_t kMinPassed = 505;
constexpr int64_t kTestsInData = 1049;  // node 932, pytorch-converted 82, pytorch-operator 35

std::string data_dir() {
  if (const char* env = std::getenv("ONNX_TV_TEST_DATA")) return env;
  return kDefaultTestData;
}

TEST(Conformance, EverySupportedTestPassesAndNoneRegresses) {
  ASSERT_TRUE(std::filesystem::is_directory(data_dir()))
      << data_dir() << " is missing: install Debian's libonnx-testdata (tools/install-deps.sh)";
  ConformanceReport r = run_conformance(data_dir());
  for (const TestCase& t : r.tests) {
    EXPECT_NE(t.outcome, Outcome::Failed) << t.suite << "/" << t.name << ": " << t.detail;
  }
  EXPECT_GE(r.count(Outcome::Passed), kMinPassed) << render_text(r);
  EXPECT_EQ(int64_t(r.tests.size()), kTestsInData);
}

TEST(Conformance, UnsupportedOpsAreNamedNeverFailures) {
  const std::string dir = data_dir() + "/data/node/test_det_2d";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is missing";
  TestCase t = run_test_case(dir, "node");
  EXPECT_EQ(t.outcome, Outcome::Unsupported);
  EXPECT_EQ(t.op, "Det");
  EXPECT_NE(t.detail.find("op 'Det'"), std::string::npos) << t.detail;
}

TEST(Conformance, ExpandedVariantsCountForTheOpTheyExpand) {
  const std::string dir = data_dir() + "/data/node/test_softmax_axis_0_expanded";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is missing";
  TestCase t = run_test_case(dir, "node");
  EXPECT_EQ(t.op, "Softmax");
  EXPECT_EQ(t.outcome, Outcome::Passed) << t.detail;
  EXPECT_GT(t.ops.size(), 1u);
}

TEST(Conformance, MissingDataIsAnInputError) {
  EXPECT_THROW(run_conformance("/nonexistent/onnx-test-data"), InputError);
}

TEST(Conformance, MarkdownHasTotalsTheCommandAndTheOpRows) {
  ConformanceReport r;
  r.data_dir = "/data";
  r.tests.push_back({"node", "test_sin", "Sin", {"Sin"}, Outcome::Passed, ""});
  r.tests.push_back({"node", "test_frob", "Frobnicate", {"Frobnicate"}, Outcome::Unsupported,
                     "op 'Frobnicate'"});
  r.tests.push_back({"pytorch-operator", "test_x", "Add+Mul", {"Add", "Mul"}, Outcome::Failed,
                     "output 'y': worst at [0]"});
  std::string md = render_markdown(r, "onnx-tv conformance --table t.md");
  EXPECT_NE(md.find("`onnx-tv conformance --table t.md`"), std::string::npos);
  EXPECT_NE(md.find("3 tests run: 1 passed, 1 failed, 1 unsupported"), std::string::npos);
  EXPECT_NE(md.find("| Sin | yes | 1 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Frobnicate |  | 0 | 0 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("pytorch-operator/test_x | output 'y': worst at [0]"), std::string::npos);
  std::string text = render_text(r);
  EXPECT_NE(text.find("FAILED pytorch-operator/test_x: output 'y': worst at [0]"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace onnx_tv::eval
