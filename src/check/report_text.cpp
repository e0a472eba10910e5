#include "check/report_text.h"

#include <cstdio>

namespace onnx_tv::check {

namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string region(const Mismatch& m) {
  std::string s = "[";
  for (size_t d = 0; d < m.region_start.size(); ++d)
    s += (d ? ", " : "") + std::to_string(m.region_start[d]) + ":" +
         std::to_string(m.region_end[d]);
  return s + "]";
}

std::string node_text(const NodeRef& n) {
  std::string where = n.rank < 0 ? n.file : "rank " + std::to_string(n.rank) + " (" + n.file + ")";
  return n.node + " [" + n.op_type + "] in " + where + ", producing '" + n.output + "'";
}

// `proven`: the verdict is EQUIVALENT; otherwise the instance was only checked (a refutation
// on it, or nothing decided).
void print_reduction(std::ostream& out, const Reduction& red, bool proven) {
  if (!red.requested) {
    out << "  shape reduction: off (--no-reduce); checked at full size\n";
    return;
  }
  if (!red.applied) {
    if (!red.not_applied.empty())
      out << "  shape reduction: not applied, checked at full size: " << red.not_applied << "\n";
    return;
  }
  out << "  shape reduction: " << (proven ? "proven" : "checked")
      << " on a reduced instance of the plan (" << red.full_elements
      << " -> " << red.reduced_elements << " tensor elements); spec inputs, full -> reduced:\n";
  const size_t shown = 10;
  size_t values = 0;
  for (size_t i = 0; i < red.dims.size();) {
    size_t j = i;
    std::vector<int64_t> full, reduced;
    while (j < red.dims.size() && red.dims[j].value == red.dims[i].value) {
      full.push_back(red.dims[j].full);
      reduced.push_back(red.dims[j].reduced);
      ++j;
    }
    if (values++ < shown)
      out << "    " << red.dims[i].value << ": " << list(full) << " -> " << list(reduced) << "\n";
    i = j;
  }
  if (values > shown) out << "    ... (" << values << " inputs in all; --json lists every factor)\n";
  for (const auto& f : red.fewer_ranks) out << "    fewer ranks: " << f << "\n";
  if (!red.fewer_micro_batches.empty())
    out << "    fewer micro-batches: " << red.fewer_micro_batches << "\n";
  for (size_t i = 0; i < red.kept_full.size() && i < shown; ++i)
    out << "    kept at full size: " << red.kept_full[i] << "\n";
  if (red.kept_full.size() > shown)
    out << "    ... (" << red.kept_full.size() << " reasons in all; --json lists them)\n";
}

}  // namespace

void print_report(std::ostream& out, const CheckResult& r) {
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
  out << verdict_name(r.verdict) << "\n";
  if (!r.message.empty()) out << "  " << r.message << "\n";
  // An UNKNOWN for want of reduction already gives the reason in its message.
  if (r.verdict != Verdict::InputError &&
      (r.reduction.not_applied.empty() || r.message.find(r.reduction.not_applied) == std::string::npos))
    print_reduction(out, r.reduction, r.verdict == Verdict::Equivalent);
  if (r.stats.sat_coefficients > 0 || r.stats.sat_routings > 0) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "  routing axioms: %lld coefficient(s) proven to vanish by CaDiCaL, %lld term(s) "
                  "rewritten under their routing (largest %lld variables, %lld clauses; %lld "
                  "solver calls, %.3f s)\n",
                  (long long)r.stats.sat_coefficients, (long long)r.stats.sat_routings,
                  (long long)r.stats.sat_max_variables,
                  (long long)r.stats.sat_max_clauses, (long long)r.stats.sat_calls,
                  r.stats.sat_seconds);
    out << buf;
  }
  if (!r.mismatch || r.verdict != Verdict::NotEquivalent) return;
  const Mismatch& m = *r.mismatch;
  const size_t shown = 12;  // witness entries
  // Where the reduction says which full-size position a reduced one stands for, both are shown.
  bool full_witness = false;
  for (size_t i = 0; i < m.witness.size() && i < shown; ++i)
    full_witness = full_witness || !m.witness[i].full_symbol.empty();
  if (r.reduction.applied) {
    out << "  (indices and witness below are in the reduced instance"
        << (m.full_element || full_witness
                ? "; \"at full size\" gives the real positions they stand for)\n"
                : ")\n");
  }
  if (r.failing_outputs.size() > 1) {
    out << "  failing outputs: " << r.failing_outputs.size() << " (";
    for (size_t i = 0; i < r.failing_outputs.size() && i < 8; ++i)
      out << (i ? ", " : "") << r.failing_outputs[i];
    out << (r.failing_outputs.size() > 8 ? ", ...)" : ")") << "; the first in detail:\n";
  }
  out << "  spec output:   '" << m.spec_output << "' region " << region(m) << ", element "
      << list(m.element) << "\n";
  if (r.reduction.applied && m.full_element)
    out << "                 at full size: element " << list(*m.full_element) << "\n";
  out << "  plan value:    " << m.rank_value << (m.partial ? " (sum of a partial set)" : "")
      << ", ranks " << list(m.ranks) << "\n";
  out << "  binding:       " << m.binding << "\n";
  out << "  witness:       ";
  for (size_t i = 0; i < m.witness.size() && i < shown; ++i)
    out << (i ? ", " : "") << m.witness[i].symbol << " = " << m.witness[i].value;
  if (m.witness.size() > shown) out << ", ... (" << m.witness.size() << " inputs in all; --json lists them)";
  if (m.witness.empty()) out << "every input 0";
  else out << "; every other input 0";
  out << "\n";
  if (r.reduction.applied && full_witness) {
    out << "                 at full size: ";
    for (size_t i = 0; i < m.witness.size() && i < shown; ++i) {
      const WitnessEntry& w = m.witness[i];
      out << (i ? ", " : "") << (w.full_symbol.empty() ? w.symbol + " (reduced only)" : w.full_symbol);
    }
    if (m.witness.size() > shown) out << ", ...";
    out << "\n";
  }
  out << "                 spec = " << m.spec_number << ", plan = " << m.plan_number << "\n";
  if (m.spec_node) out << "  first diverging operator, spec: " << node_text(*m.spec_node) << "\n";
  if (m.rank_node) out << "  first diverging operator, plan: " << node_text(*m.rank_node) << "\n";
}

std::string summary_line(const CheckResult& r) {
  char buf[512];
  if (r.verdict == Verdict::InputError || r.verdict == Verdict::Unknown) {
    std::snprintf(buf, sizeof buf, "%s: nothing is proven, %.2f s", verdict_name(r.verdict).c_str(),
                  r.stats.seconds);
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "%s: %lld ranks, %lld spec nodes, %lld rank nodes, %lld collectives, %lld "
                "elements compared, largest polynomial %lld terms%s, %.2f s",
                verdict_name(r.verdict).c_str(), (long long)r.stats.ranks,
                (long long)r.stats.spec_nodes, (long long)r.stats.rank_nodes,
                (long long)r.stats.collectives, (long long)r.stats.elements_compared,
                (long long)r.stats.max_terms, r.stats.staged ? " (stage-wise)" : "",
                r.stats.seconds);
  std::string line = buf;
  if (r.stats.stages_reused > 0)  // "; 40 stage obligations, 9 proven, 31 the same as one proven"
    line += "; " + std::to_string(r.stats.stages) + " stage obligations, " +
            std::to_string(r.stats.stages_proven) + " proven, " +
            std::to_string(r.stats.stages_reused) + " the same as one proven";
  if (r.stats.layers_left_out > 0)  // "; 7 layers left out as the same as one kept"
    line += "; " + std::to_string(r.stats.layers_left_out) + " layer" +
            (r.stats.layers_left_out > 1 ? "s" : "") + " left out as the same as one kept";
  if (r.stats.processes > 1) {  // "; 3 processes proved 2, 1 and 1 instances"
    line += "; " + std::to_string(r.stats.processes) + " processes proved ";
    const auto& n = r.stats.process_instances;
    for (size_t p = 0; p < n.size(); ++p)
      line += (p == 0 ? "" : p + 1 == n.size() ? " and " : ", ") + std::to_string(n[p]);
    line += " instances";
  }
  return line;
}

}  // namespace onnx_tv::check
