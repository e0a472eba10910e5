#include "cli/safe_report.h"

#include <nlohmann/json.hpp>

#include "check/report_json.h"
#include "common/printable.h"

namespace onnx_tv::cli {

namespace {

void fix(std::string& s) { s = printable(s); }

void fix(std::vector<std::string>& list) {
  for (std::string& s : list) fix(s);
}

void fix(std::optional<check::NodeRef>& n) {
  if (!n) return;
  fix(n->file);
  fix(n->node);
  fix(n->op_type);
  fix(n->output);
}

}  // namespace

void make_printable(check::CheckResult& r) {
  fix(r.message);
  fix(r.failing_outputs);
  fix(r.warnings);
  if (r.mismatch) {
    check::Mismatch& m = *r.mismatch;
    for (std::string* s : {&m.spec_output, &m.binding, &m.rank_value, &m.spec_number,
                           &m.plan_number, &m.spec_expr, &m.plan_expr}) {
      fix(*s);
    }
    for (check::WitnessEntry& w : m.witness) {
      fix(w.symbol);
      fix(w.value);
    }
    fix(m.spec_node);
    fix(m.rank_node);
  }
  check::Reduction& red = r.reduction;
  fix(red.not_applied);
  fix(red.kept_full);
  fix(red.fewer_ranks);
  fix(red.fewer_rank_axes);
  fix(red.fewer_micro_batches);
  for (reduce::ReducedDim& d : red.dims) {
    fix(d.value);
    for (reduce::ReducedFactor& f : d.factors) fix(f.why);
  }
}

std::string internal_error_json(const std::string& message, const std::string& spec_path,
                                const std::string& shards_dir) {
  // The same keys as every other report, from the same writer; only the verdict differs.
  check::CheckResult empty;
  empty.message = printable(message);
  nlohmann::json j =
      nlohmann::json::parse(check::to_json(empty, printable(spec_path), printable(shards_dir)));
  j["verdict"] = "INTERNAL ERROR";
  j["exit_code"] = 4;
  return j.dump(2) + "\n";
}

}  // namespace onnx_tv::cli
