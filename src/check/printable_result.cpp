#include "check/printable_result.h"

#include "common/printable.h"

namespace onnx_tv::check {

namespace {

void fix(std::string& s) { s = printable(s); }

void fix(std::vector<std::string>& list) {
  for (std::string& s : list) fix(s);
}

void fix(std::optional<NodeRef>& n) {
  if (!n) return;
  fix(n->file);
  fix(n->node);
  fix(n->op_type);
  fix(n->output);
}

}  // namespace

void make_printable(CheckResult& r) {
  fix(r.message);
  fix(r.failing_outputs);
  fix(r.warnings);
  if (r.mismatch) {
    Mismatch& m = *r.mismatch;
    for (std::string* s : {&m.spec_output, &m.binding, &m.rank_value, &m.spec_number,
                           &m.plan_number, &m.spec_expr, &m.plan_expr}) {
      fix(*s);
    }
    for (WitnessEntry& w : m.witness) {
      fix(w.symbol);
      fix(w.value);
      fix(w.full_symbol);
    }
    fix(m.spec_node);
    fix(m.rank_node);
  }
  Reduction& red = r.reduction;
  fix(red.not_applied);
  fix(red.kept_full);
  fix(red.fewer_ranks);
  fix(red.fewer_rank_axes);
  fix(red.fewer_micro_batches);
  for (auto* dims : {&red.dims, &red.other_dims}) {
    for (reduce::ReducedDim& d : *dims) {
      fix(d.value);
      for (reduce::ReducedFactor& f : d.factors) fix(f.why);
    }
  }
}

}  // namespace onnx_tv::check
