// The driver of the dimension rules: every node is validated by its op's schema at full size
// (ops/infer_shapes.h) before its rule reads it, shape arithmetic on small exact integer tensors
// runs the kernel itself, and everything else goes to its family's rule (rule_families.cpp).
#include <algorithm>

#include "common/errors.h"
#include "common/limits.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"
#include "reduce/infer.h"
#include "reduce/rule_families.h"

namespace onnx_tv::reduce {

namespace {

using ir::DType;
using ir::Node;

constexpr int64_t kConcreteMax = limits::kConcreteMax;  // elements known exactly

DimValue from_tensor(Inference& inf, ir::Tensor t, bool size_derived, const std::string& origin) {
  DimValue v;
  v.dims = inf.dims.fresh_shape(t.shape, origin + " (integer values known exactly)", /*fixed=*/true);
  v.dtype = t.dtype;
  v.concrete = std::move(t);
  v.size_derived = size_derived;
  return v;
}

// Validation at full size: what the node's outputs are, or InputError naming the node.
std::vector<ops::OutputInfo> validate(Inference& inf, const ProgramDims& prog, size_t idx,
                                      const ops::OpSchema& schema,
                                      const std::vector<const DimValue*>& in) {
  std::vector<ops::InputInfo> info(in.size());
  std::vector<const ops::InputInfo*> ptrs(in.size(), nullptr);
  for (size_t k = 0; k < in.size(); ++k) {
    if (!in[k]) continue;
    info[k].shape = inf.dims.full_shape(in[k]->dims);
    info[k].dtype = in[k]->dtype;
    if (schema.is_shape_input(k) && in[k]->concrete) info[k].ints = integer_values(inf, *in[k]);
    ptrs[k] = &info[k];
  }
  try {
    return ops::infer_shapes(schema, prog.graph->nodes[idx], ptrs);
  } catch (Error& e) {
    e.add_context(where(prog, idx));
    throw;
  }
}

// Shape arithmetic (Shape, Gather, Concat, ... of small integer tensors): the kernel's exact
// result, or nullopt when the node is not such arithmetic.
std::optional<std::vector<DimValue>> run_exactly(Inference& inf, ProgramDims& prog, size_t idx,
                                                 const ops::OpSchema& schema,
                                                 const std::vector<const DimValue*>& in,
                                                 const std::vector<ops::OutputInfo>& want) {
  const Node& node = prog.graph->nodes[idx];
  bool all_concrete = !node.inputs.empty() || schema.traits.rule == ops::DimRule::Constant;
  bool size_derived = false;
  for (auto* v : in) {
    if (v && !v->concrete) all_concrete = false;
    if (v && v->size_derived) size_derived = true;
  }
  if (!all_concrete || !schema.traits.shape_arith) return std::nullopt;
  for (const auto& o : want)  // ops that make big tensors from small ones (Expand, Range)
    if (!o.shape || ir::element_count(*o.shape) > kConcreteMax) return std::nullopt;
  std::vector<const ir::Tensor*> ts;
  for (auto* v : in) ts.push_back(v ? &*v->concrete : nullptr);
  std::vector<ir::Tensor> outs;
  try {
    outs = ops::run_node(inf.ctx, node, idx, ts);
  } catch (Error& e) {
    e.add_context(prog.label);  // run_node names the node
    throw;
  }
  for (auto& t : outs)
    // Only integers stay exact: a size cast to float is data, frozen at full size where it is
    // read (rewrite.cpp), so no irrational value ever needs storing.
    if (!(ir::is_integer(t.dtype) || t.dtype == DType::Bool)) return std::nullopt;
  std::vector<DimValue> res;
  for (auto& t : outs) res.push_back(from_tensor(inf, std::move(t), size_derived, where(prog, idx)));
  return res;
}

// Shape and Size read only the full-size shape: exact whatever the size of their input.
std::vector<DimValue> sizes_of(Inference& inf, const ProgramDims& prog, size_t idx,
                               const ops::OpSchema& schema, const DimValue& x,
                               const std::vector<ops::OutputInfo>& want) {
  const std::vector<int64_t> ext = inf.dims.full_shape(x.dims);
  std::vector<int64_t> vals;
  if (schema.traits.rule == ops::DimRule::Size) {
    vals = {ir::element_count(ext)};
  } else {
    const Node& node = prog.graph->nodes[idx];
    const int64_t r = int64_t(ext.size());
    auto bound = [r](int64_t b) { return std::clamp<int64_t>(b < 0 ? b + r : b, 0, r); };
    const ir::Attribute* s = node.attribute("start");
    const ir::Attribute* e = node.attribute("end");
    for (int64_t k = s ? bound(s->i) : 0; k < (e ? bound(e->i) : r); ++k) vals.push_back(ext[size_t(k)]);
  }
  std::vector<solver::Value> data;
  for (auto v : vals) data.push_back(inf.ctx.constant((long long)v));
  return {from_tensor(inf, ir::make_tensor(DType::Int64, *want[0].shape, std::move(data)), true,
                      where(prog, idx))};
}

}  // namespace

std::string where(const ProgramDims& prog, size_t i) {
  return prog.label + ": " + prog.graph->nodes[i].describe(i);
}

void cannot(const ProgramDims& prog, size_t i, const std::string& why) {
  throw NotApplicable(where(prog, i) + ": " + why);
}

std::optional<std::vector<int64_t>> integer_values(Inference& inf, const DimValue& v) {
  std::vector<int64_t> out;
  for (auto x : v.concrete->data) {
    auto r = inf.ctx.as_rational(x);
    if (!r || r->get_den() != 1 || !r->get_num().fits_slong_p()) return std::nullopt;
    out.push_back(r->get_num().get_si());
  }
  return out;
}

bool is_shape_slot(const Node& n, size_t slot) {
  const ops::OpSchema* s = ops::schema_of(n);
  return s && s->is_shape_input(slot);
}

DimValue const_dims(Inference& inf, const ir::ConstTensor& c, const std::string& origin) {
  const int64_t n = ir::element_count(c.shape);
  // Scalars of any type are known too (a float Range bound); they lie along no dimension.
  if (((ir::is_integer(c.dtype) || c.dtype == DType::Bool) && n <= kConcreteMax) || n == 1) {
    DimValue v = from_tensor(inf, ir::to_tensor(inf.ctx, c), false, origin);
    v.uniform = v.parts = uniform_axes_of_constant(inf, c, v.dims);
    return v;
  }
  DimValue v;
  v.dims = inf.dims.fresh_shape(c.shape, origin);
  v.dtype = c.dtype;
  v.uniform = v.parts = uniform_axes_of_constant(inf, c, v.dims);
  return v;
}

std::vector<DimValue> infer_node(Inference& inf, ProgramDims& prog, size_t idx) {
  const Node& node = prog.graph->nodes[idx];
  const ops::OpSchema* schema = ops::schema_of(node);
  if (!schema) cannot(prog, idx, "onnx-tv does not model " + node.op_type);
  std::vector<const DimValue*> in;
  for (const auto& name : node.inputs) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    auto it = prog.values.find(name);
    if (it == prog.values.end()) cannot(prog, idx, "reads '" + name + "', which is not defined");
    in.push_back(&it->second);
  }
  const std::vector<ops::OutputInfo> want = validate(inf, prog, idx, *schema, in);
  const ops::DimRule rule = schema->traits.rule;
  if (rule == ops::DimRule::Shape || rule == ops::DimRule::Size)
    return sizes_of(inf, prog, idx, *schema, *in[0], want);
  if (rule == ops::DimRule::Constant)
    if (const ir::Attribute* a = node.attribute("value"); a && a->kind == ir::Attribute::Kind::Tensor)
      return {const_dims(inf, *a->tensor, where(prog, idx))};
  if (auto exact = run_exactly(inf, prog, idx, *schema, in, want)) return *exact;
  RuleArgs args{inf, prog, idx, node, *schema, where(prog, idx), in, want};
  std::vector<DimValue> outs = apply_rule(args);
  for (size_t k = 0; k < outs.size() && k < want.size(); ++k)
    ONNX_TV_ASSERT(!want[k].shape || inf.dims.full_shape(outs[k].dims) == *want[k].shape,
                   args.here + ": the dimension rule gives output #" + std::to_string(k) +
                       " the shape " + ir::shape_string(inf.dims.full_shape(outs[k].dims)) +
                       ", validation " + ir::shape_string(*want[k].shape));
  return outs;
}

}  // namespace onnx_tv::reduce
