// Exit codes follow `check`: 0 fine, 1 outputs differ from the expected ones (or a conformance
// test failed), 2 user's error, 3 UNKNOWN (an op or case onnx-tv does not model, named).
#include "cli/eval_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/options.h"
#include "common/errors.h"
#include "common/printable.h"
#include "eval/compare.h"
#include "eval/conformance.h"
#include "eval/eval.h"
#include "frontend/tensor_file.h"
#include "ir/tensor_util.h"

namespace onnx_tv::cli {

namespace {

constexpr int kMismatchExit = 1, kUsageExit = 2, kUnknownExit = 3;

const char* kEvalUsage =
    "usage: onnx-tv eval MODEL.onnx --inputs DIR [--expected DIR] [--out DIR]\n"
    "       onnx-tv conformance [DATA_DIR] [--table FILE.md]\n";

int usage(const std::string& msg) {
  std::cerr << "onnx-tv: " << msg << "\n\n" << kEvalUsage;
  return kUsageExit;
}

// Up to 64 elements, so a large output does not flood the terminal. Names come from the files
// and are shown through printable().
void print_tensor(std::ostream& out, const eval::NumericTensor& t) {
  out << printable(t.name) << ": " << ir::dtype_name(t.dtype) << " " << ir::shape_string(t.shape) << "\n ";
  const size_t shown = std::min<size_t>(t.values.size(), 64);
  for (size_t i = 0; i < shown; ++i) out << " " << eval::format_number(t.values[i]);
  if (shown < t.values.size()) out << " ... (" << t.values.size() << " elements)";
  out << "\n";
}

int eval_model(const std::string& model, const std::string& inputs, const std::string& expected,
               const std::string& out_dir) {
  ir::Graph g = eval::load_eval_model(model);
  if (std::string op = eval::first_unsupported_op(g); !op.empty()) {
    std::cout << "UNKNOWN: " << op << " is not supported\n";
    return kUnknownExit;
  }
  std::vector<eval::NumericTensor> got = eval::evaluate(g, eval::load_tensor_dir(inputs, "input_"));
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    for (size_t i = 0; i < got.size(); ++i) {
      auto path = std::filesystem::path(out_dir) / ("output_" + std::to_string(i) + ".pb");
      frontend::save_tensor_file(path.string(), got[i].name, eval::to_const(got[i]));
    }
  }
  if (expected.empty()) {
    for (const auto& t : got) print_tensor(std::cout, t);
    return 0;
  }
  auto want = eval::load_tensor_dir(expected, "output_");
  if (want.size() != got.size()) {
    std::cout << "MISMATCH: " << got.size() << " outputs computed, " << want.size()
              << " expected in " << expected << "\n";
    return kMismatchExit;
  }
  int exit = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    eval::Comparison c =
        eval::compare(got[i], eval::as_bfloat16_if_bits(want[i].tensor, got[i].dtype));
    if (c.kind == eval::Comparison::Kind::Match) {
      std::cout << "output '" << printable(got[i].name) << "': matches\n";
    } else if (c.kind == eval::Comparison::Kind::NanExpected) {
      std::cout << "UNKNOWN: " << printable(c.message) << "\n";
      if (exit == 0) exit = kUnknownExit;
    } else {
      std::cout << "MISMATCH: " << printable(c.message) << "\n";
      exit = kMismatchExit;
    }
  }
  return exit;
}

// Writes `markdown` between the generated-table markers of `path`, keeping the hand-written
// text around them; a file without markers gets them.
void write_table(const std::string& path, const std::string& markdown) {
  const std::string begin = "<!-- conformance:begin -->", end = "<!-- conformance:end -->";
  std::string text;
  if (std::ifstream in(path); in) {
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  const size_t b = text.find(begin), e = text.find(end);
  const std::string block = begin + "\n" + markdown + end;
  if (b != std::string::npos && e != std::string::npos && b < e) {
    text = text.substr(0, b) + block + text.substr(e + end.size());
  } else {
    text = "# Operator conformance\n\n" + block + "\n";
  }
  std::ofstream out(path);
  out << text;
  if (!out) throw InputError(path + ": cannot be written");
}

}  // namespace

int run_eval(const std::vector<std::string>& args) {
  std::string model, inputs, expected, out_dir;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << kEvalUsage;
      return 0;
    } else if (a == "--inputs" || a == "--expected" || a == "--out") {
      const std::optional<std::string> v = option_value(args, i);
      if (!v) return usage(missing_value(args, i, "a folder"));
      (a == "--inputs" ? inputs : a == "--expected" ? expected : out_dir) = *v;
    } else if (a.rfind("--", 0) == 0) {
      return usage("unknown option '" + a + "'");
    } else if (model.empty()) {
      model = a;
    } else {
      return usage("unexpected argument '" + a + "'");
    }
  }
  if (model.empty() || inputs.empty()) return usage("eval needs MODEL.onnx and --inputs DIR");
  try {
    return eval_model(model, inputs, expected, out_dir);
  } catch (const Unsupported& e) {
    std::cout << "UNKNOWN: " << e.what() << "\n";
    return kUnknownExit;
  } catch (const InternalError&) {
    throw;
  } catch (const InputError& e) {
    std::cerr << "onnx-tv: " << e.what() << "\n";
    return kUsageExit;
  }
}

int run_conformance(const std::vector<std::string>& args) {
  std::string data_dir = eval::kDefaultTestData, table;
  bool have_dir = false;
  std::string command = "onnx-tv conformance";
  for (size_t i = 0; i < args.size(); ++i) {
    command += " " + args[i];
    if (args[i] == "--help" || args[i] == "-h") {
      std::cout << kEvalUsage;
      return 0;
    } else if (args[i] == "--table") {
      const std::optional<std::string> v = option_value(args, i);
      if (!v) return usage(missing_value(args, i, "a file name"));
      table = *v;
      command += " " + table;
    } else if (args[i].rfind("--", 0) == 0) {
      return usage("unknown option '" + args[i] + "'");
    } else if (!have_dir) {
      data_dir = args[i];
      have_dir = true;
    } else {
      return usage("unexpected argument '" + args[i] + "'");
    }
  }
  try {
    eval::ConformanceReport r = eval::run_conformance(data_dir);
    std::cout << eval::render_text(r);
    if (!table.empty()) write_table(table, eval::render_markdown(r, command));
    return r.count(eval::Outcome::Failed) > 0 ? kMismatchExit : 0;
  } catch (const InternalError&) {
    throw;
  } catch (const InputError& e) {
    std::cerr << "onnx-tv: " << e.what() << "\n";
    return kUsageExit;
  }
}

}  // namespace onnx_tv::cli
