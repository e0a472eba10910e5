// The CLI's report never fails on names from the files, and an internal error still leaves a
// JSON report.
#include "cli/safe_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "check/printable_result.h"
#include "check/report_json.h"
#include "check/report_text.h"

namespace onnx_tv::cli {
namespace {

TEST(SafeReport, NamesThatAreNotUtf8AreEscapedInTextAndJson) {
  check::CheckResult r;
  r.verdict = check::Verdict::NotEquivalent;
  r.warnings = {"rank output 'y\xff' is bound by no binding"};
  r.failing_outputs = {"dw\xc3"};
  check::Mismatch m;
  m.spec_output = "dw\xc3";
  m.rank_value = "dw_part\x1b[2J";
  m.witness = {{"x\xfe[0]", "1/3"}};
  m.rank_node = check::NodeRef{"rank0.onnx", 0, "node\xff", "MatMul", "dw_part\xff"};
  r.mismatch = m;
  r.reduction.dims.push_back({"x\xfe", 0, 4, 2, {{4, 2, "kept \xff"}}});
  // Before: the JSON writer throws on invalid UTF-8 (the CLI exited 4 with an empty report).
  EXPECT_THROW(check::to_json(r, "spec.onnx", "shards"), std::exception);

  check::make_printable(r);
  const nlohmann::json j = nlohmann::json::parse(check::to_json(r, "spec.onnx", "shards"));
  EXPECT_EQ(j["warnings"][0], "rank output 'y\\xff' is bound by no binding");
  EXPECT_EQ(j["mismatch"]["spec_output"], "dw\\xc3");
  EXPECT_EQ(j["mismatch"]["rank_value"], "dw_part\\x1b[2J");
  EXPECT_EQ(j["mismatch"]["rank_node"]["node"], "node\\xff");
  EXPECT_TRUE(j["mismatch"]["witness"].contains("x\\xfe[0]"));
  EXPECT_EQ(j["reduction"]["dims"][0]["value"], "x\\xfe");
  std::ostringstream text;
  check::print_report(text, r);
  EXPECT_NE(text.str().find("node\\xff [MatMul]"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find('\x1b'), std::string::npos);
}

TEST(SafeReport, InternalErrorReportHasTheUsualKeysAndExitCode4) {
  const nlohmann::json j = nlohmann::json::parse(
      internal_error_json("assertion `x` failed in '\xff'", "spec\xfe.onnx", "shards"));
  EXPECT_EQ(j["format"], "onnx-tv.report/1");
  EXPECT_EQ(j["verdict"], "INTERNAL ERROR");
  EXPECT_EQ(j["exit_code"], 4);
  EXPECT_EQ(j["message"], "assertion `x` failed in '\\xff'");
  EXPECT_EQ(j["spec"], "spec\\xfe.onnx");
  EXPECT_EQ(j["shards"], "shards");
  EXPECT_TRUE(j.contains("stats"));
  EXPECT_TRUE(j["warnings"].empty());
}

}  // namespace
}  // namespace onnx_tv::cli
