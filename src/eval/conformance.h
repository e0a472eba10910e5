#pragma once
// The conformance runner: every test of ONNX's backend test data (Debian's libonnx-testdata)
// in the suites node/, pytorch-converted/ and pytorch-operator/ run through `evaluate` and
// compared with its expected outputs. A test is
//   passed       every data set's outputs match (compare.h's tolerance),
//   failed       some output differs, or onnx-tv rejects a valid test,
//   unsupported  it uses an op onnx-tv does not model (named), or a case the project leaves out
//                of scope (a dtype or attribute the kernel reports as Unsupported, NaN in the
//                reference, a value undefined over the reals).
#include <functional>
#include <string>
#include <vector>

namespace onnx_tv::eval {

// Debian's documented location of the test data; its suites lie under data/.
inline constexpr const char* kDefaultTestData = "/usr/share/libonnx-testdata";

enum class Outcome { Passed, Failed, Unsupported };

struct TestCase {
  std::string suite;             // "node", "pytorch-converted", "pytorch-operator"
  std::string name;              // "test_softmax_axis_0_expanded"
  std::string op;                // the op under test (see conformance.cpp), for the table
  std::vector<std::string> ops;  // distinct op types of the model, in order of appearance
  Outcome outcome = Outcome::Passed;
  std::string detail;            // why unsupported, or what failed (output, worst element)
};

struct ConformanceReport {
  std::string data_dir;  // the folder holding node/, pytorch-converted/, ...
  std::vector<TestCase> tests;
  int64_t count(Outcome o) const;
};

// Runs every test under `data_dir` (either the package's top folder or its data/ folder).
// InputError when no suite is found there. `on_test` is called after each test.
ConformanceReport run_conformance(const std::string& data_dir,
                                  const std::function<void(const TestCase&)>& on_test = {});

// One test folder (model.onnx and test_data_set_*); `suite` only labels it.
TestCase run_test_case(const std::string& dir, const std::string& suite);

// The terminal report: per-op table, totals, then each failure with its detail.
std::string render_text(const ConformanceReport& r);

// The Markdown tables for docs/conformance.md; `command` is the line that generated them.
std::string render_markdown(const ConformanceReport& r, const std::string& command);

}  // namespace onnx_tv::eval
