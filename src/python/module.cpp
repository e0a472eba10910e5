// onnx_tv._core: the C++ side of the Python package (python/onnx_tv, docs/python.md). It runs
// one check with the GIL released and hands back what the CLI would print and write; the
// Python side builds the Result from that and raises the package's exceptions.
#include <pybind11/pybind11.h>

#include <new>
#include <sstream>
#include <string>

#include "check/check.h"
#include "check/printable_result.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "common/errors.h"
#include "common/printable.h"
#include "python/progress_relay.h"

namespace onnx_tv::python {

namespace py = pybind11;

namespace {

// What one check came to, as plain C++ data, so that it is built without the GIL.
struct Outcome {
  int exit_code = 4;     // the CLI's: 0 to 3 for a verdict, 4 for an internal error
  std::string message;   // the verdict's message, or what failed for an internal error
  std::string json;      // the --json report
  std::string text;      // the CLI's standard output
  std::vector<check::WitnessEntry> witness;  // in the text report's order (JSON sorts it)
};

// The CLI's run_check (src/cli/main.cpp) without the printing: the same catches, the same
// messages, the same report.
Outcome run_check(const std::string& spec, const std::string& shards,
                  const check::CheckOptions& options) {
  Outcome out;
  std::string internal;
  try {
    check::CheckResult result = check::run(spec, shards, options);
    check::make_printable(result);
    try {
      out.json = check::to_json(result, printable(spec), printable(shards));
    } catch (const std::exception& e) {
      throw InternalError(std::string("internal error: the JSON report cannot be written: ") +
                          e.what());
    }
    std::ostringstream text;
    check::print_report(text, result);
    text << check::summary_line(result) << "\n";
    out.text = text.str();
    out.exit_code = int(result.verdict);
    out.message = result.message;
    if (result.mismatch) out.witness = result.mismatch->witness;
    return out;
  } catch (const InternalError& e) {
    internal = e.what();
  } catch (const std::bad_alloc&) {
    internal = "out of memory";
  } catch (const std::exception& e) {
    internal = std::string("internal error: ") + e.what();
  }
  out.message = printable(internal);
  return out;
}

py::dict check_binding(const py::bytes& spec, const py::bytes& shards, bool reduce, bool stages,
                       bool reuse, bool fold, uint64_t seed, int64_t max_elements,
                       size_t max_memory, int jobs, py::object progress) {
  ProgressRelay relay(std::move(progress));
  check::CheckOptions options;
  options.reduce = reduce;
  options.stages = stages;
  options.reuse = reuse;
  options.fold = fold;
  options.witness_seed = seed;
  options.max_elements = max_elements;
  options.max_memory = max_memory;
  options.jobs = jobs;
  // By reference: CheckOptions is copied inside the check, where the GIL is not held.
  options.on_progress = [&relay](const check::Progress& p) { relay(p); };
  const std::string spec_path = spec, shards_dir = shards;
  Outcome out;
  try {
    py::gil_scoped_release released;
    out = run_check(spec_path, shards_dir, options);
  } catch (const Stopped&) {
    std::rethrow_exception(relay.error());  // KeyboardInterrupt, or the callback's exception
  }
  py::list witness;
  for (const check::WitnessEntry& w : out.witness) witness.append(py::make_tuple(w.symbol, w.value));
  py::dict d;
  d["exit_code"] = out.exit_code;
  d["message"] = out.message;
  d["json"] = out.json;
  d["text"] = out.text;
  d["witness"] = witness;
  return d;
}

}  // namespace

}  // namespace onnx_tv::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  m.doc() = "The C++ side of onnx_tv; use onnx_tv.check, which validates the options.";
  m.def("check", &onnx_tv::python::check_binding, py::arg("spec"), py::arg("shards"),
        py::arg("reduce"), py::arg("stages"), py::arg("reuse"), py::arg("fold"), py::arg("seed"),
        py::arg("max_elements"),
        py::arg("max_memory"), py::arg("jobs"), py::arg("progress"),
        "Runs one check; returns exit_code, message, json, text and witness (symbol, value) "
        "pairs. Paths are bytes, max_memory is in bytes (0: 85% of the machine's).");
}
