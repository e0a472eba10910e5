#include "check/stage_cuts.h"

#include <unordered_map>

#include "common/errors.h"
#include "ops/registry.h"

namespace onnx_tv::check {

StageCuts::StageCuts(solver::Context& ctx, const ir::Graph& spec, size_t max_terms)
    : ctx_(ctx), max_terms_(max_terms) {
  std::unordered_map<std::string, bool> summed;  // tensor -> every consumer so far adds it
  for (const auto& node : spec.nodes) {
    const ops::OpSchema* schema = ops::schema_of(node);
    if (schema && schema->traits.algebra == ops::Algebra::SumReduction)
      reductions_.insert(node.outputs[0]);
    const bool adds = schema && schema->adds();
    for (const auto& in : node.inputs)
      if (!in.empty()) {
        auto [it, fresh] = summed.emplace(in, adds);
        if (!fresh) it->second = it->second && adds;
      }
  }
  for (const auto& vi : spec.outputs) summed[vi.name] = false;
  for (const auto& [name, only] : summed)
    if (only) summed_only_.insert(name);
}

void StageCuts::check_size(const std::string& name, const ir::Tensor& t) const {
  for (const auto& v : t.data)
    if (ctx_.term_count(v) > max_terms_)
      throw NotApplicable("stage-wise proof: '" + name + "' grew past " +
                          std::to_string(max_terms_) + " terms");
}

void StageCuts::on_spec_tensor(const std::string& name, ir::Tensor& t) {
  check_size(name, t);
  if (!ir::is_float(t.dtype) || summed_only_.count(name)) return;
  const bool reduced = reductions_.count(name) > 0;
  for (auto& v : t.data) v = reduced ? ctx_.cut_flattening(v, max_terms_) : ctx_.cut(v);
}

void StageCuts::on_rank_tensor(const std::string& name, ir::Tensor& t) {
  if (!ir::is_float(t.dtype)) {  // integer values are sizes and indices: constants
    check_size(name, t);
    return;
  }
  // A large value the spec never cut (a wrong value downstream of a bug, most often) is cut
  // on its own: exact like every cut, and what follows it stays small. It meets the spec
  // only by unfolding.
  for (auto& v : t.data) {
    v = ctx_.known_cut(v);
    if (ctx_.term_count(v) > max_terms_) v = ctx_.cut(v);
  }
}

}  // namespace onnx_tv::check
