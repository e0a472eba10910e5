// onnx-tv: proves a distributed training plan equivalent to its single-device model.
#include <jemalloc/jemalloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/outcome_wire.h"
#include "check/printable_result.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "cli/eval_command.h"
#include "cli/options.h"
#include "cli/progress_bar.h"
#include "cli/safe_report.h"
#include "common/errors.h"
#include "common/memory_limit.h"
#include "common/memory_watchdog.h"
#include "common/printable.h"
#include "dist/mpi_world.h"

namespace {

constexpr int kUsageExit = 2;
constexpr int kInternalExit = 4;

const char* kUsage =
    "usage: onnx-tv check SPEC.onnx SHARDS_DIR [--json FILE] [--no-progress] [--seed N]\n"
    "                    [--no-reduce] [--no-stages] [--no-reuse] [--no-fold] [--max-elements N]\n"
    "                    [--max-memory GB] [--jobs N]\n"
    "       onnx-tv eval MODEL.onnx --inputs DIR [--expected DIR] [--out DIR]\n"
    "       onnx-tv conformance [DATA_DIR] [--table FILE.md]\n"
    "       onnx-tv --help | --version\n"
    "\n"
    "Proves that the per-rank ONNX programs in SHARDS_DIR compute what SPEC.onnx computes.\n"
    "Exit codes: 0 EQUIVALENT, 1 NOT EQUIVALENT, 2 input error, 3 UNKNOWN, 4 internal error.\n"
    "\n"
    "  --json FILE     also write the verdict as a JSON report to FILE\n"
    "  --no-progress   never draw a progress bar (it is drawn only on a terminal anyway)\n"
    "  --seed N        seed for the witness search (default 1)\n"
    "  --no-reduce     check at full size instead of on a reduced instance of the plan\n"
    "  --no-stages     prove the whole program at once, without a stage-wise proof first\n"
    "  --no-reuse      run every stage, without proving each distinct stage once first\n"
    "  --no-fold       prove every layer, without leaving out those alike (docs/design.md 4d)\n"
    "  --max-elements N  the most tensor elements (spec and ranks) an instance may hold to be\n"
    "                  proven (default 20000000)\n"
    "  --max-memory GB   stop with UNKNOWN when the proof's memory passes GB (default 85% of\n"
    "                  the machine's memory)\n"
    "  --jobs N        prove up to N independent instances at once (the counts of fewer\n"
    "                  ranks and micro-batches; default: the cores this process may use,\n"
    "                  shared among the processes on one machine); under mpirun or srun,\n"
    "                  the processes share the instances out, N at a time each\n"
    "  -h, --help      print this help and exit\n"
    "  --version       print onnx-tv's version and exit\n"
    "\n"
    "eval runs MODEL.onnx on the tensors input_0.pb, input_1.pb, ... in DIR with the prover's\n"
    "op semantics (exact where rational) and prints its outputs, compares them with the\n"
    "output_*.pb in --expected (exit 1 on a difference), or writes them to --out.\n"
    "conformance runs ONNX's backend tests (default /usr/share/libonnx-testdata) and prints\n"
    "passed, failed and unsupported tests per op; --table writes them as Markdown.\n";

// A positive number written whole ("12", "0.5"); nullopt for anything else ("12x", "0").
std::optional<double> positive(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (...) {
  }
  return std::nullopt;
}

// Writes the --json report; false (after saying so) when it cannot be written.
bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::cerr << "onnx-tv: cannot write the JSON report to '" << onnx_tv::printable(path) << "'\n";
    return false;
  }
  return true;
}

int usage_error(const std::string& msg) {
  std::cerr << "onnx-tv: " << msg << "\n\n" << kUsage;
  return kUsageExit;
}

// ONNX_TV_VERSION is the CMake project version, defined for this target only.
int print_version() {
  std::cout << "onnx-tv " << ONNX_TV_VERSION << "\n";
  return 0;
}

int run_check(const std::vector<std::string>& args) {
  std::string spec, shards, json_path;
  bool progress = isatty(STDERR_FILENO);
  onnx_tv::check::CheckOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--version") {
      return print_version();
    } else if (a == "--json") {
      const std::optional<std::string> v = onnx_tv::cli::option_value(args, i);
      if (!v) return usage_error(onnx_tv::cli::missing_value(args, i, "a file name"));
      json_path = *v;
    } else if (a == "--no-progress") {
      progress = false;
    } else if (a == "--no-reduce") {
      options.reduce = false;
    } else if (a == "--no-stages") {
      options.stages = false;
    } else if (a == "--no-reuse") {
      options.reuse = false;
    } else if (a == "--no-fold") {
      options.fold = false;
    } else if (a == "--seed") {
      const std::optional<std::string> v = onnx_tv::cli::option_value(args, i);
      if (!v) return usage_error(onnx_tv::cli::missing_value(args, i, "a number"));
      try {
        size_t used = 0;
        options.witness_seed = std::stoull(*v, &used);
        if (used != v->size() || v->front() == '-') throw std::invalid_argument(*v);
      } catch (...) {
        return usage_error("--seed needs a number, not '" + *v + "'");
      }
    } else if (a == "--max-elements" || a == "--jobs" || a == "--max-memory") {
      const bool whole = a == "--max-elements" || a == "--jobs";
      const std::string what = std::string("a positive ") + (whole ? "whole " : "") + "number";
      const std::optional<std::string> v = onnx_tv::cli::option_value(args, i);
      if (!v) return usage_error(onnx_tv::cli::missing_value(args, i, what));
      const std::optional<double> n = positive(*v);
      if (!n || (whole && *n != double(int64_t(*n))) || (a == "--jobs" && *n > 1024))
        return usage_error(a + " needs " + what + ", not '" + *v + "'");
      if (a == "--max-elements") options.max_elements = int64_t(*n);
      if (a == "--jobs") options.jobs = int(*n);
      if (a == "--max-memory") options.max_memory = size_t(*n * double(1ull << 30));  // GB
    } else if (a.rfind("--", 0) == 0) {
      return usage_error("unknown option '" + a + "'");
    } else if (spec.empty()) {
      spec = a;
    } else if (shards.empty()) {
      shards = a;
    } else {
      return usage_error("unexpected argument '" + a + "'");
    }
  }
  if (shards.empty()) return usage_error("check needs SPEC.onnx and SHARDS_DIR");
  if (std::getenv("ONNX_TV_TRACE")) {  // developers' aid: where time and terms go
    progress = false;
    options.trace = [](const std::string& f, const std::string& n, double s, size_t t) {
      std::fprintf(stderr, "%8.3f s %9zu terms  %s: %s\n", s, t, f.c_str(), n.c_str());
    };
  }
  // A world of one process, unless mpirun or srun started this one (docs/distributed.md).
  onnx_tv::dist::MpiWorld world;
  if (world.processes() > 1) {
    options.spread = {world.process(), world.processes(),
                      [&world](const std::string& mine) { return world.exchange(mine); },
                      world.processes_here()};
    progress = progress && world.process() == 0;  // one bar: process 0's share
  }
  // jemalloc keeps freed pages for reuse; --max-memory reads resident memory.
  options.release_memory = [] {
    const std::string purge = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
    mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0);
  };
  onnx_tv::cli::ProgressBar bar(progress);
  options.on_progress = [&](const onnx_tv::check::Progress& p) { bar.update(p); };
  onnx_tv::check::CheckResult result;
  std::string internal;  // what failed, when the check stopped on a bug in onnx-tv
  // Past --max-memory inside one long step, the watchdog answers UNKNOWN for the check (with
  // its --json report) and ends the process before the system kills it.
  const auto started = std::chrono::steady_clock::now();
  onnx_tv::MemoryWatchdog watchdog(
      onnx_tv::check::memory_limit_bytes(options), [&](size_t resident) {
        onnx_tv::check::CheckResult over;
        over.verdict = onnx_tv::check::Verdict::Unknown;
        over.stats.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        over.message = onnx_tv::memory_limit_message(
            onnx_tv::check::memory_limit_bytes(options),
            "a step that passed it before the check looked again (resident " +
                std::to_string(resident >> 20) + " MB)");
        if (!json_path.empty())
          write_file(json_path, onnx_tv::check::to_json(over, onnx_tv::printable(spec),
                                                        onnx_tv::printable(shards)));
        if (progress) std::fputs("\n", stderr);
        onnx_tv::check::print_report(std::cout, over);
        std::cout << onnx_tv::check::summary_line(over) << std::endl;
        std::_Exit(int(over.verdict));
      });
  try {
    result = onnx_tv::check::run(spec, shards, options);
  } catch (const onnx_tv::InternalError& e) {
    internal = e.what();
  } catch (const std::bad_alloc&) {
    internal = "out of memory";
  } catch (const std::exception& e) {
    internal = std::string("internal error: ") + e.what();
  }
  watchdog.stop();  // the report below is this thread's (or the watchdog ended the process)
  bar.clear();
  if (world.processes() > 1) {
    // Every process ends with the same result; process 0 reports it.
    const std::string chosen = world.finish(
        internal.empty() ? "r" + onnx_tv::check::encode_result(result) : "i" + internal);
    internal = chosen[0] == 'i' ? chosen.substr(1) : "";
    if (internal.empty()) result = onnx_tv::check::decode_result(chosen.substr(1));
    if (world.process() != 0) return internal.empty() ? int(result.verdict) : kInternalExit;
  }
  if (internal.empty()) {
    onnx_tv::check::make_printable(result);
    std::string json;
    if (!json_path.empty()) {
      try {
        json = onnx_tv::check::to_json(result, onnx_tv::printable(spec), onnx_tv::printable(shards));
      } catch (const std::exception& e) {
        internal = std::string("internal error: the JSON report cannot be written: ") + e.what();
      }
    }
    if (internal.empty()) {
      if (!json_path.empty() && !write_file(json_path, json)) return kUsageExit;
      onnx_tv::check::print_report(std::cout, result);
      std::cout << onnx_tv::check::summary_line(result) << std::endl;
      return int(result.verdict);
    }
  }
  // A bug: the report says so too, so that pipelines reading it are not left without one.
  internal = onnx_tv::printable(internal);
  if (!json_path.empty()) {
    write_file(json_path, onnx_tv::cli::internal_error_json(internal, spec, shards));
  }
  std::cerr << "onnx-tv: " << internal << "\nThis is a bug in onnx-tv; please report it.\n";
  return kInternalExit;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kUsageExit : 0;
  }
  if (args[0] == "--version") return print_version();
  try {
    if (args[0] == "check") return run_check({args.begin() + 1, args.end()});
    if (args[0] == "eval") return onnx_tv::cli::run_eval({args.begin() + 1, args.end()});
    if (args[0] == "conformance") return onnx_tv::cli::run_conformance({args.begin() + 1, args.end()});
    return usage_error("unknown command '" + args[0] + "'");
  } catch (const onnx_tv::InternalError& e) {
    std::cerr << "onnx-tv: " << e.what() << "\nThis is a bug in onnx-tv; please report it.\n";
    return kInternalExit;
  } catch (const std::bad_alloc&) {
    std::cerr << "onnx-tv: out of memory\n";
    return kInternalExit;
  } catch (const std::exception& e) {
    std::cerr << "onnx-tv: internal error: " << onnx_tv::printable(e.what()) << "\n";
    return kInternalExit;
  }
}
