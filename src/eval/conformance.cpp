#include "eval/conformance.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/errors.h"
#include "eval/compare.h"
#include "eval/eval.h"
#include "solver/context.h"

namespace onnx_tv::eval {

namespace fs = std::filesystem;

namespace {

const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator"};

std::vector<std::string> distinct_ops(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes) {
    std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  return ops;
}

// The op a test is about. Node tests hold one node, except the `_expanded` variants, which hold
// the op's function body: they count for the op of their unexpanded sibling. Other tests are
// named by their ops joined with '+'.
std::string op_under_test(const fs::path& dir, const ir::Graph& g) {
  const std::string name = dir.filename().string();
  const std::string suffix = "_expanded";
  if (name.size() > suffix.size() && name.ends_with(suffix)) {
    fs::path sibling = dir.parent_path() / name.substr(0, name.size() - suffix.size());
    try {
      ir::Graph s = load_eval_model((sibling / "model.onnx").string());
      if (s.nodes.size() == 1) return s.nodes[0].op_type;
    } catch (const Error&) {
    }
  }
  std::string joined;
  for (const auto& op : distinct_ops(g)) joined += (joined.empty() ? "" : "+") + op;
  return joined.empty() ? "(no op)" : joined;
}

bool holds_non_finite(const std::vector<InputTensor>& ts) {
  for (const auto& t : ts) {
    for (double v : t.tensor.reals) {
      if (!std::isfinite(v)) return true;
    }
  }
  return false;
}

// One data set: Outcome and detail.
std::pair<Outcome, std::string> run_data_set(const ir::Graph& g, const fs::path& set) {
  std::vector<InputTensor> ins, expected;
  try {
    ins = load_tensor_dir(set.string(), "input_");
    expected = load_tensor_dir(set.string(), "output_");
  } catch (const Unsupported& e) {
    return {Outcome::Unsupported, e.what()};
  } catch (const InternalError&) {
    throw;  // a bug in onnx-tv, not a test that failed
  } catch (const std::exception& e) {
    return {Outcome::Failed, std::string("test data not read: ") + e.what()};
  }
  std::vector<NumericTensor> got;
  try {
    got = evaluate(g, ins);
  } catch (const Unsupported& e) {
    return {Outcome::Unsupported, e.what()};
  } catch (const MathError& e) {
    // The project models the reals: NaN and infinities from undefined operations are out of
    // scope, but only when the test is about them.
    if (holds_non_finite(ins) || holds_non_finite(expected))
      return {Outcome::Unsupported, std::string("undefined over the reals: ") + e.what()};
    return {Outcome::Failed, std::string("error: ") + e.what()};
  } catch (const InternalError&) {
    throw;  // a bug in onnx-tv, not a test that failed
  } catch (const std::exception& e) {
    return {Outcome::Failed, std::string("error: ") + e.what()};
  }
  if (got.size() != expected.size()) {
    return {Outcome::Failed, std::to_string(got.size()) + " outputs computed, " +
                                 std::to_string(expected.size()) + " expected"};
  }
  std::string nan_note;
  for (size_t i = 0; i < got.size(); ++i) {
    Comparison c = compare(got[i], as_bfloat16_if_bits(expected[i].tensor, got[i].dtype));
    if (c.kind == Comparison::Kind::Mismatch) return {Outcome::Failed, c.message};
    if (c.kind == Comparison::Kind::NanExpected) nan_note = c.message;
  }
  if (!nan_note.empty()) return {Outcome::Unsupported, nan_note};
  return {Outcome::Passed, ""};
}

}  // namespace

int64_t ConformanceReport::count(Outcome o) const {
  return std::count_if(tests.begin(), tests.end(),
                       [o](const TestCase& t) { return t.outcome == o; });
}

TestCase run_test_case(const std::string& dir_name, const std::string& suite) {
  const fs::path dir(dir_name);
  TestCase tc;
  tc.suite = suite;
  tc.name = dir.filename().string();
  ir::Graph g;
  try {
    g = load_eval_model((dir / "model.onnx").string());
  } catch (const Unsupported& e) {
    tc.op = tc.name;
    tc.outcome = Outcome::Unsupported;
    tc.detail = e.what();
    return tc;
  } catch (const InternalError&) {
    throw;  // a bug in onnx-tv, not a test that failed
  } catch (const std::exception& e) {
    tc.op = tc.name;
    tc.outcome = Outcome::Failed;
    tc.detail = std::string("model not read: ") + e.what();
    return tc;
  }
  tc.ops = distinct_ops(g);
  tc.op = op_under_test(dir, g);
  if (std::string op = first_unsupported_op(g); !op.empty()) {
    tc.outcome = Outcome::Unsupported;
    tc.detail = op + " is not supported";
    return tc;
  }
  // Sequences, maps and optionals have no tensor type (the loader leaves them Undefined).
  for (const auto* list : {&g.inputs, &g.outputs}) {
    for (const auto& vi : *list) {
      if (vi.dtype != ir::DType::Undefined) continue;
      tc.outcome = Outcome::Unsupported;
      tc.detail = "graph input or output '" + vi.name +
                  "' is not a tensor (a sequence, map or optional); only tensors are modeled";
      return tc;
    }
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_"))
      sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    tc.outcome = Outcome::Failed;
    tc.detail = "no test_data_set_* folder";
  }
  for (const auto& set : sets) {
    auto [outcome, detail] = run_data_set(g, set);
    if (outcome == Outcome::Passed) continue;
    tc.outcome = outcome;
    tc.detail = (sets.size() > 1 ? set.filename().string() + ": " : "") + detail;
    if (outcome == Outcome::Failed) break;
  }
  return tc;
}

ConformanceReport run_conformance(const std::string& data_dir,
                                  const std::function<void(const TestCase&)>& on_test) {
  ConformanceReport r;
  std::error_code ec;
  r.data_dir = fs::is_directory(fs::path(data_dir) / "data" / "node", ec)
                   ? (fs::path(data_dir) / "data").string()
                   : data_dir;
  bool any = false;
  for (const char* suite : kSuites) {
    const fs::path root = fs::path(r.data_dir) / suite;
    if (!fs::is_directory(root, ec)) continue;
    any = true;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root)) {
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      r.tests.push_back(run_test_case(d.string(), suite));
      if (on_test) on_test(r.tests.back());
    }
  }
  if (!any) {
    throw InputError(data_dir + ": no ONNX test data found (expected node/, pytorch-converted/ "
                     "or pytorch-operator/ there or under data/; Debian's package is "
                     "libonnx-testdata)");
  }
  return r;
}

}  // namespace onnx_tv::eval
