// The degree of every value in each shrunk count, and the refusal of counts that 2 and 3 do
// not prove (docs/shape-reduction.md, "Why 2 and 3").
//
// With n pieces along a count (ranks along a mesh axis, or micro-batches), a value of degree d
// is a sum, over tuples of at most d piece indices, of one fixed function of those pieces (and
// of everything not cut along the count). Inputs, constants and what a piece computes from its
// own data have degree 0; a sum over the count (an all-reduce, a reduction or contraction along
// a dimension that holds the count, a total over micro-batches) adds 1; a product adds the
// degrees; a function that is not a polynomial (exp, 1/x, max, a comparison) of a value of
// degree above 0 has no such form, and its degree is unbounded. A difference of degree d that
// is 0 for d+1 counts, each at least d, is 0 for every count, so proofs at 2 and 3 prove every
// count where every obligation has degree at most 1; elsewhere the count keeps its ranks.
#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>

#include "ir/comm_parse.h"
#include "ops/registry.h"
#include "reduce/mesh_axes.h"
#include "reduce/micro_batches.h"
#include "reduce/reduce_detail.h"

namespace onnx_tv::reduce {

namespace {

constexpr int kUnbounded = 1 << 20;

int add(int a, int b) { return std::min(kUnbounded, a + b); }

// A scatter that multiplies (or takes the max or min of) what lands on one element.
bool reduction_multiplies(const ir::Node& n) {
  const ir::Attribute* r = n.attribute("reduction");
  return r && r->s != "none" && r->s != "add";
}

struct Degrees {
  std::vector<int> d;  // per count
  // Per count: where it first passed 1, as an index into Walker's texts (-1: nowhere). Not the
  // text itself: past the first unbounded value every value downstream carries one.
  std::vector<int> why;
};

class Walker {
 public:
  Walker(Inference& inf, std::vector<Var> counts) : inf_(inf), counts_(std::move(counts)) {}

  // Walks values without dimensions (refused_before_linking): where a rule needs them to know
  // a degree, it gives the least one.
  void without_dims() { dimless_ = true; }

  size_t size() const { return counts_.size(); }

  // How many times the count's variable divides `a`.
  int occurrences(const Axis& a, size_t k) {
    int n = 0;
    const Axis root = inf_.dims.leaves({counts_[k]});
    for (Var v : inf_.dims.leaves(a))
      if (!root.empty() && v == root[0]) ++n;
    return n;
  }

  Degrees zero() const { return {std::vector<int>(size(), 0), std::vector<int>(size(), -1)}; }

  int note(std::string why) {
    whys_.push_back(std::move(why));
    return int(whys_.size()) - 1;
  }
  std::string why_text(int why) const { return why < 0 ? std::string() : whys_[size_t(why)]; }

  // The degrees of a node's outputs from its inputs' (`values`); `why` keeps, per count, the
  // node where a degree first passed 1.
  Degrees node(ProgramDims& prog, size_t idx,
               const std::unordered_map<std::string, Degrees>& values) {
    const ir::Node& n = prog.graph->nodes[idx];
    const ops::OpSchema* schema = ops::schema_of(n);
    std::vector<const Degrees*> in;
    std::vector<const DimValue*> dims;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      auto it = n.inputs[k].empty() || is_shape_slot(n, k) ? values.end() : values.find(n.inputs[k]);
      in.push_back(it == values.end() ? nullptr : &it->second);
      auto dt = n.inputs[k].empty() ? prog.values.end() : prog.values.find(n.inputs[k]);
      dims.push_back(dt == prog.values.end() ? nullptr : &dt->second);
    }
    Degrees out = zero();
    auto deg = [&](size_t i, size_t k) { return i < in.size() && in[i] ? in[i]->d[k] : 0; };
    auto why_of = [&](size_t k) {
      for (const Degrees* d : in)
        if (d && d->why[k] >= 0) return d->why[k];
      return -1;
    };
    auto max_in = [&](size_t k) {
      int m = 0;
      for (size_t i = 0; i < in.size(); ++i) m = std::max(m, deg(i, k));
      return m;
    };
    auto axis_occ = [&](size_t input, const std::vector<int64_t>& axes, size_t k) {
      int o = 0;
      if (input >= dims.size() || !dims[input]) return o;
      const DimShape& s = dims[input]->dims;
      for (int64_t a : axes)
        if (a >= 0 && a < int64_t(s.size())) o += occurrences(s[size_t(a)], k);
      return o;
    };
    const size_t rank0 = dims.empty() || !dims[0] ? 0 : dims[0]->dims.size();
    using ops::Algebra;
    using ops::DimRule;
    const Algebra alg = schema ? schema->traits.algebra : Algebra::Function;
    auto rule_is = [&](DimRule r) { return schema && schema->has_rule(r); };
    const bool sizes = rule_is(DimRule::Shape) || rule_is(DimRule::Size);
    std::vector<int64_t> reduced;  // for reductions: the axes reduced
    if (rule_is(DimRule::Reduce) && !dims.empty() && dims[0])
      reduced = reduced_axes(inf_, n, *dims[0], dims);
    for (size_t k = 0; k < size(); ++k) {
      int d = 0;
      if (alg == Algebra::Sum || alg == Algebra::Difference || alg == Algebra::Affine ||
          (alg == Algebra::Moves && !sizes)) {
        d = max_in(k);
      } else if (alg == Algebra::Gather) {
        d = deg(1, k) > 0 ? kUnbounded : deg(0, k);
      } else if (alg == Algebra::Scatter) {
        // Each element is the data's plus updates that may land on it: from anywhere in the
        // updates for ScatterND, a sum along every axis of them as a contraction's; from its
        // own row along the axis for ScatterElements; one update, summed with nothing, for a
        // scatter without a reduction.
        const ir::Attribute* r = n.attribute("reduction");
        const size_t rank2 = dims.size() > 2 && dims[2] ? dims[2]->dims.size() : 0;
        std::vector<int64_t> along;
        if (r && r->s != "none") {
          if (n.op_type == "ScatterElements") {
            const int64_t a = n.attribute("axis") ? n.attribute("axis")->i : 0;
            along.push_back(a < 0 ? a + int64_t(rank2) : a);
          } else {
            for (size_t a = 0; a < rank2; ++a) along.push_back(int64_t(a));
          }
        }
        std::vector<int64_t> every(rank2);
        for (size_t a = 0; a < every.size(); ++a) every[a] = int64_t(a);
        d = deg(1, k) > 0 ? kUnbounded : std::max(deg(0, k), add(deg(2, k), axis_occ(2, along, k)));
        if (reduction_multiplies(n)) d = deg(2, k) > 0 || axis_occ(2, every, k) > 0 ? kUnbounded : deg(0, k);
      } else if (alg == Algebra::Select) {
        d = deg(0, k) > 0 ? kUnbounded : std::max(deg(1, k), deg(2, k));
      } else if (alg == Algebra::Product) {
        d = add(deg(0, k), deg(1, k));
      } else if (alg == Algebra::Quotient) {
        d = deg(1, k) > 0 ? kUnbounded : deg(0, k);
      } else if (alg == Algebra::Power) {
        std::optional<std::vector<int64_t>> e;
        if (dims.size() > 1 && dims[1] && dims[1]->concrete) e = integer_values(inf_, *dims[1]);
        if (deg(1, k) == 0 && deg(0, k) == 0) d = 0;
        else if (dimless_ && deg(1, k) == 0 && !e) d = 0;  // an exponent of 0 gives that
        else if (deg(1, k) == 0 && e && e->size() == 1 && (*e)[0] >= 0)
          d = int(std::min<int64_t>(kUnbounded, int64_t(deg(0, k)) * (*e)[0]));
        else d = kUnbounded;
      } else if (rule_is(DimRule::MatMul) || rule_is(DimRule::Gemm)) {
        const bool gemm = rule_is(DimRule::Gemm);
        int64_t ka = int64_t(rank0) - 1;
        if (gemm && n.attribute("transA") && n.attribute("transA")->i) ka = 0;
        d = add(add(deg(0, k), deg(1, k)), axis_occ(0, {ka}, k));
        if (gemm) d = std::max(d, deg(2, k));
      } else if (rule_is(DimRule::Reduce) && alg == Algebra::SumReduction) {
        d = add(deg(0, k), axis_occ(0, reduced, k));
      } else if (rule_is(DimRule::Reduce) && alg == Algebra::Reduction) {  // a sum of squares
        d = add(add(deg(0, k), deg(0, k)), axis_occ(0, reduced, k));
      } else if (rule_is(DimRule::Reduce)) {
        d = deg(0, k) > 0 || axis_occ(0, reduced, k) > 0 ? kUnbounded : 0;
      } else if (sizes || alg == Algebra::Source) {
        d = 0;
      } else {
        // Not a polynomial (exp, 1/x, max, comparisons, softmax, norms) or mixing along an axis
        // that may hold the count: degree 0 only when every input has degree 0 and no axis it
        // mixes along holds the count.
        d = max_in(k) > 0 ? kUnbounded : 0;
        if (d == 0 && mixes_along_count(n, dims, k)) d = kUnbounded;
      }
      out.d[k] = d;
      out.why[k] = d > 1 ? why_of(k) : -1;
      if (d > 1 && out.why[k] < 0) out.why[k] = note(where(prog, idx));
    }
    return out;
  }

 private:
  // Softmax and LayerNormalization mix the elements along some axes; whether one of those
  // holds the count.
  bool mixes_along_count(const ir::Node& n, const std::vector<const DimValue*>& dims, size_t k) {
    if (dims.empty() || !dims[0]) return false;
    const DimShape& s = dims[0]->dims;
    const int64_t r = int64_t(s.size());
    auto attr = [&](const char* name, int64_t def) {
      const ir::Attribute* a = n.attribute(name);
      const int64_t v = a ? a->i : def;
      return v < 0 ? v + r : v;
    };
    int64_t from = 0, to = 0;  // the axes [from, to) it mixes along
    const ops::OpSchema* schema = ops::schema_of(n);
    if (!schema) {
      from = 0, to = r;  // unknown: every axis
    } else if (schema->normalizes()) {
      from = attr("axis", n.opset < 13 ? 1 : -1);
      to = n.opset < 13 ? r : from + 1;  // the older forms flatten every axis from `axis` on
    } else if (schema->has_rule(ops::DimRule::LayerNorm)) {
      from = attr("axis", -1), to = r;
    } else {
      return false;
    }
    for (int64_t a = std::max<int64_t>(from, 0); a < std::min(to, r); ++a)
      if (occurrences(s[size_t(a)], k) > 0) return true;
    return false;
  }

  Inference& inf_;
  bool dimless_ = false;
  std::vector<Var> counts_;
  std::vector<std::string> whys_;
};

}  // namespace

std::optional<KeepRanks> check_count_degrees(Inference& inf, const ir::Graph& spec, const ir::Plan& plan,
                         const exec::LinkedPlan& linked, const std::vector<BoundRegion>& bound,
                         const std::vector<std::vector<std::string>>& totals) {
  std::vector<Var> counts;
  std::vector<std::string> names;
  std::vector<size_t> mesh_axis;  // per count: its mesh axis, or SIZE_MAX for micro-batches
  for (size_t a = 0; a < inf.shrinks.size(); ++a)
    if (inf.shrinks[a]) {
      counts.push_back(inf.dims.leaves(inf.mesh_counts[a])[0]);
      names.push_back(inf.full_mesh->axes[a]);
      mesh_axis.push_back(a);
    }
  if (inf.micro_batch_target) {
    counts.push_back(inf.dims.leaves(inf.micro_batches)[0]);
    names.push_back(kMicroBatches);
    mesh_axis.push_back(SIZE_MAX);
  }
  if (counts.empty()) return std::nullopt;
  Walker w(inf, counts);

  std::unordered_map<std::string, Degrees> spec_deg;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    Degrees d = w.node(inf.spec, i, spec_deg);
    for (const auto& o : spec.nodes[i].outputs)
      if (!o.empty()) spec_deg[o] = d;
  }
  std::vector<std::unordered_map<std::string, Degrees>> rank_deg(size_t(plan.world_size));
  std::vector<std::set<std::string>> total_set(plan.programs.size());
  for (size_t p = 0; p < totals.size() && p < total_set.size(); ++p)
    total_set[p].insert(totals[p].begin(), totals[p].end());
  for (const exec::Step& step : linked.steps) {
    if (step.kind == exec::Step::Kind::Node) {
      const int64_t r = step.members[0].rank;
      ProgramDims& p = inf.ranks[size_t(r)];
      const size_t i = step.members[0].node_index;
      const ir::Node& n = p.graph->nodes[i];
      const size_t prog = plan.rank_program[size_t(r)];
      const bool total = !n.outputs.empty() && total_set[prog].count(n.outputs[0]);
      Degrees d = w.node(p, i, rank_deg[size_t(r)]);
      if (total && mesh_axis.back() == SIZE_MAX) {  // a sum of one value per micro-batch
        const size_t k = w.size() - 1;
        d.d[k] = add(d.d[k], 1);
        if (d.d[k] > 1 && d.why[k] < 0) d.why[k] = w.note(where(p, i));
      }
      for (const auto& o : n.outputs)
        if (!o.empty()) rank_deg[size_t(r)][o] = d;
      continue;
    }
    Degrees d = w.zero();
    for (const auto& m : step.members) {
      auto it = rank_deg[size_t(m.rank)].find(m.comm->data_input);
      if (it == rank_deg[size_t(m.rank)].end()) continue;
      for (size_t k = 0; k < w.size(); ++k)
        if (it->second.d[k] > d.d[k]) d.d[k] = it->second.d[k], d.why[k] = it->second.why[k];
    }
    if (step.kind == exec::Step::Kind::Collective) {
      const ir::CommOp& op = *step.members[0].comm;
      const ProgramDims& p0 = inf.ranks[size_t(step.members[0].rank)];
      std::vector<int64_t> group;
      for (const auto& m : step.members) group.push_back(m.rank);
      const std::vector<size_t> spans = spanned_axes(inf, group);
      const bool reduces = op.kind == ir::CommKind::AllReduce || op.kind == ir::CommKind::ReduceScatter;
      for (size_t k = 0; k < w.size(); ++k) {
        if (!reduces || std::find(spans.begin(), spans.end(), mesh_axis[k]) == spans.end()) continue;
        d.d[k] = op.reduce == ir::ReduceOp::Sum ? add(d.d[k], 1) : kUnbounded;
        if (d.d[k] > 1 && d.why[k] < 0) d.why[k] = w.note(where(p0, step.members[0].node_index));
      }
    }
    for (const auto& m : step.members)
      if (!m.comm->output.empty()) rank_deg[size_t(m.rank)][m.comm->output] = d;
  }

  // Every obligation: a rank output bound to a spec value. A partial set sums its addends over
  // ranks, which may lie along any count.
  for (const BoundRegion& b : bound) {
    const ir::Binding& fb = *b.binding;
    const auto& rd = rank_deg[size_t(fb.rank)];
    auto rv = rd.find(fb.value);
    auto sv = spec_deg.find(fb.spec);
    if (rv == rd.end() && sv == spec_deg.end()) continue;  // an input binding
    const ir::Graph& g = plan.program_of(fb.rank);
    bool is_output = false;
    for (const auto& o : g.outputs) is_output |= o.name == fb.value;
    if (!is_output) continue;
    for (size_t k = 0; k < w.size(); ++k) {
      const int dr = rv == rd.end() ? 0 : add(rv->second.d[k], fb.partial && mesh_axis[k] != SIZE_MAX);
      const int ds = sv == spec_deg.end() ? 0 : sv->second.d[k];
      if (std::max(dr, ds) <= 1) continue;
      const std::string why = w.why_text(dr >= ds ? (rv == rd.end() ? -1 : rv->second.why[k])
                                                  : sv->second.why[k]);
      auto text = [](int d) { return d >= kUnbounded ? std::string("unbounded") : std::to_string(d); };
      const std::string count = mesh_axis[k] == SIZE_MAX ? "the count of micro-batches"
                                                         : "its count of ranks";
      return KeepRanks{names[k], "output binding " + fb.origin + " has degree " + text(dr) +
                                    " on the plan's side and " + text(ds) + " on the spec's in " +
                                    count + (why.empty() ? std::string() : " (from " + why + ")") +
                                    ", so 2 and 3 do not prove every count",
                      mesh_axis[k] == SIZE_MAX};
    }
  }
  return std::nullopt;
}

std::optional<KeepRanks> refused_before_linking(const FewerRanks& fewer) {
  const ir::Plan& plan = fewer.plan;
  if (fewer.axes.empty() || !plan.mesh) return std::nullopt;
  std::vector<int64_t> axis_of;  // per count: its mesh axis
  for (const auto& a : fewer.axes) axis_of.push_back(plan.mesh->axis_index(a));
  // No dimensions: a reduction or contraction along the count, and the exponent of a Pow,
  // count nothing here, so every degree is at most the one inference would give.
  Inference none;
  Walker w(none, std::vector<Var>(axis_of.size(), 0));
  w.without_dims();
  std::vector<char> walked(plan.programs.size(), 0);
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const size_t program = plan.rank_program[size_t(r)];
    // One rank per file: its own bindings are judged on its own walk, which is all the
    // bound needs; the other ranks of the file are left to the instance.
    if (walked[program]) continue;
    walked[program] = 1;
    ProgramDims prog;
    prog.graph = &plan.program_of(r);
    prog.label = "rank " + std::to_string(r) + " (" + prog.graph->file + ")";
    const std::vector<int64_t> at = plan.mesh->coords(r);
    std::unordered_map<std::string, Degrees> deg;
    for (size_t i = 0; i < prog.graph->nodes.size(); ++i) {
      const ir::Node& n = prog.graph->nodes[i];
      Degrees d = w.zero();
      if (!ir::is_comm_op(n)) {
        d = w.node(prog, i, deg);
      } else {
        // What a Recv brings is another file's: degree 0 here, the least it can be. A
        // collective's is at least this member's.
        const ir::CommOp op = ir::parse_comm_op(plan, r, i);
        if (auto it = deg.find(op.data_input); it != deg.end()) d = it->second;
        const bool reduces =
            op.kind == ir::CommKind::AllReduce || op.kind == ir::CommKind::ReduceScatter;
        std::vector<std::vector<int64_t>> members;  // their coordinates, once
        if (reduces)
          for (int64_t m : op.group) members.push_back(plan.mesh->coords(m));
        for (size_t k = 0; k < w.size() && reduces; ++k) {
          const size_t a = size_t(axis_of[k]);
          bool spans = false;
          for (const auto& c : members) spans |= c[a] != at[a];
          if (!spans) continue;
          d.d[k] = op.reduce == ir::ReduceOp::Sum ? add(d.d[k], 1) : kUnbounded;
          if (d.d[k] > 1 && d.why[k] < 0) d.why[k] = w.note(where(prog, i));
        }
      }
      for (const auto& o : n.outputs)
        if (!o.empty()) deg[o] = d;
    }
    std::set<std::string_view> outputs;
    for (const auto& o : prog.graph->outputs) outputs.insert(o.name);
    for (const ir::Binding& b : plan.bindings) {
      if (b.rank != r || !outputs.count(b.value)) continue;
      auto it = deg.find(b.value);
      if (it == deg.end()) continue;
      for (size_t k = 0; k < w.size(); ++k) {
        const int dr = add(it->second.d[k], b.partial);
        if (dr <= 1) continue;
        const std::string why = w.why_text(it->second.why[k]);
        return KeepRanks{fewer.axes[k],
                         "output binding " + b.origin + " has degree " +
                             (dr >= kUnbounded ? std::string("unbounded") : std::to_string(dr)) +
                             " on the plan's side in its count of ranks" +
                             (why.empty() ? std::string() : " (from " + why + ")") +
                             ", so 2 and 3 do not prove every count (seen before linking)"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace onnx_tv::reduce
