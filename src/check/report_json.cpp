#include "check/report_json.h"

#include <nlohmann/json.hpp>

namespace onnx_tv::check {

namespace {

nlohmann::json node_json(const NodeRef& n) {
  return {{"file", n.file}, {"rank", n.rank}, {"node", n.node}, {"op_type", n.op_type},
          {"output", n.output}};
}

}  // namespace

std::string to_json(const CheckResult& r, const std::string& spec_path,
                    const std::string& shards_dir) {
  nlohmann::json j;
  j["format"] = "onnx-tv.report/1";
  j["spec"] = spec_path;
  j["shards"] = shards_dir;
  j["verdict"] = verdict_name(r.verdict);
  j["exit_code"] = int(r.verdict);
  if (!r.message.empty()) j["message"] = r.message;
  j["warnings"] = r.warnings;
  j["failing_outputs"] = r.failing_outputs;
  if (r.mismatch) {
    const Mismatch& m = *r.mismatch;
    nlohmann::json mj;
    mj["spec_output"] = m.spec_output;
    mj["region"] = {{"start", m.region_start}, {"end", m.region_end}};
    mj["element"] = m.element;
    mj["binding"] = m.binding;
    mj["partial"] = m.partial;
    mj["ranks"] = m.ranks;
    mj["rank_value"] = m.rank_value;
    nlohmann::json w = nlohmann::json::object();
    for (const auto& e : m.witness) w[e.symbol] = e.value;
    mj["witness"] = w;
    // Added with the reduction's full-size positions; absent where none is known.
    nlohmann::json full = nlohmann::json::object();
    if (r.reduction.applied && m.full_element) full["element"] = *m.full_element;
    nlohmann::json fw = nlohmann::json::object();
    for (const auto& e : m.witness)
      if (r.reduction.applied && !e.full_symbol.empty()) fw[e.symbol] = e.full_symbol;
    if (!fw.empty()) full["witness"] = fw;
    if (!full.empty()) mj["full_size"] = full;
    mj["spec_value"] = m.spec_number;
    mj["plan_value"] = m.plan_number;
    mj["spec_expression"] = m.spec_expr;
    mj["plan_expression"] = m.plan_expr;
    if (m.spec_node) mj["spec_node"] = node_json(*m.spec_node);
    if (m.rank_node) mj["rank_node"] = node_json(*m.rank_node);
    j["mismatch"] = mj;
  }
  {
    const Reduction& red = r.reduction;
    nlohmann::json rj;
    rj["requested"] = red.requested;
    rj["applied"] = red.applied;
    if (!red.not_applied.empty()) rj["not_applied"] = red.not_applied;
    rj["full_elements"] = red.full_elements;
    rj["reduced_elements"] = red.reduced_elements;
    rj["kept_full"] = red.kept_full;
    rj["fewer_ranks"] = red.fewer_ranks;
    if (!red.fewer_micro_batches.empty()) rj["fewer_micro_batches"] = red.fewer_micro_batches;
    nlohmann::json dims = nlohmann::json::array();
    for (const auto& d : red.dims) {
      nlohmann::json fs = nlohmann::json::array();
      for (const auto& f : d.factors) {
        nlohmann::json fj = {{"full", f.full}, {"reduced", f.reduced}};
        if (!f.why.empty()) fj["kept_because"] = f.why;
        fs.push_back(fj);
      }
      dims.push_back({{"value", d.value}, {"axis", d.axis}, {"full", d.full},
                      {"reduced", d.reduced}, {"factors", fs}});
    }
    rj["dims"] = dims;
    j["reduction"] = rj;
  }
  const CheckStats& s = r.stats;
  j["stats"] = {{"ranks", s.ranks},           {"spec_nodes", s.spec_nodes},
                {"rank_nodes", s.rank_nodes}, {"collectives", s.collectives},
                {"bindings", s.bindings},     {"elements_compared", s.elements_compared},
                {"max_terms", s.max_terms},   {"atoms", s.atoms},
                {"polynomials", s.polynomials}, {"staged", s.staged},
                {"stages", {{"total", s.stages}, {"proven", s.stages_proven},
                            {"reused", s.stages_reused}}},
                {"layers", {{"run", s.layers}, {"left_out", s.layers_left_out}}},
                {"seconds", s.seconds},
                {"processes", s.processes},   {"process_instances", s.process_instances}};
  if (s.sat_coefficients > 0 || s.sat_routings > 0)
    j["stats"]["sat"] = {{"coefficients", s.sat_coefficients},
                         {"routings", s.sat_routings},
                         {"max_variables", s.sat_max_variables},
                         {"max_clauses", s.sat_max_clauses},
                         {"solver_calls", s.sat_calls},
                         {"seconds", s.sat_seconds}};
  return j.dump(2) + "\n";
}

}  // namespace onnx_tv::check
