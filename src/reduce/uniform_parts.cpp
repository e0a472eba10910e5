// Counts hidden in symbolic sums (docs/shape-reduction.md, "Sizes read as values"). A sum along
// a reduced dimension of data that holds a part not varying along it, `ReduceSum(x + b)` with
// `b` broadcast, is `sum(x) + n*b`: the count n of the dimension's elements is in the value.
// The reduced instance has another n, so a plan that writes that part with a literal made for
// one size (`ReduceSum(x + 1) - 2` against `ReduceSum(x)`), or a variance computed as
// `E[x^2] - E[x]^2` against `E[(x - E[x])^2]` with the divisors frozen at full size, would be
// judged at the wrong count. Such a dimension keeps its full size.
//
// Each value carries two sets of dimension variables (an over-approximation is always safe: it
// only keeps more dimensions whole):
// - `uniform`: along these the value is the same at every position (a broadcast operand, a
//   constant equal along an axis, a reduction's result broadcast back);
// - `parts`: along these some part of the value (a monomial of its polynomial) is the same at
//   every position; `uniform` is contained in it.
// Sums (+, -) keep any part an operand has; a product has a part only where every factor does
// (x_i * b varies with i, (x_i + b) * c holds b*c); a function that is not a polynomial (exp,
// sqrt, a comparison) of a varying argument gives distinct atoms at every position, so its
// parts are only its uniform directions. A sum, mean or contraction along a variable of `parts`
// of every factor counts it.
#include <algorithm>
#include <set>

#include "ops/registry.h"
#include "reduce/infer.h"

namespace onnx_tv::reduce {

namespace {

using ir::Node;
using VarSet = std::set<Var>;

VarSet leaves_of(Inference& inf, const Axis& a) {
  const Axis l = inf.dims.leaves(a);
  return VarSet(l.begin(), l.end());
}

VarSet vars_of(Inference& inf, const DimShape& s) {
  VarSet out;
  for (const Axis& a : s) {
    const Axis l = inf.dims.leaves(a);
    out.insert(l.begin(), l.end());
  }
  return out;
}

Axis to_axis(const VarSet& s) { return Axis(s.begin(), s.end()); }

VarSet meet(const VarSet& a, const VarSet& b) {
  VarSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.begin()));
  return out;
}

VarSet join(VarSet a, const VarSet& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// One operand as the output sees it: its sets, with the output's variables it does not have
// (it is broadcast along them) added to both.
struct Operand {
  VarSet uniform, parts;
};

Operand operand(Inference& inf, const DimValue& v, const VarSet& out_vars) {
  const VarSet own = vars_of(inf, v.dims);
  VarSet missing;
  for (Var x : out_vars)
    if (!own.count(x)) missing.insert(x);
  Operand o;
  o.uniform = join(leaves_of(inf, v.uniform), missing);
  o.parts = join(join(leaves_of(inf, v.parts), o.uniform), missing);
  return o;
}

enum class Kind { Additive, Product, Quotient, Power, Function, Select, Reduction, Contraction,
                  Moves, Gather, Scatter, Norm, Source };

Kind kind_of(const ops::OpSchema& s) {
  using ops::Algebra;
  switch (s.traits.algebra) {
    case Algebra::Unset: break;
    case Algebra::Sum:
    case Algebra::Difference:
    case Algebra::Affine: return Kind::Additive;
    case Algebra::Product: return Kind::Product;
    case Algebra::Quotient: return Kind::Quotient;
    case Algebra::Power: return Kind::Power;
    case Algebra::Select: return Kind::Select;
    case Algebra::Function: return Kind::Function;
    case Algebra::SumReduction:
    case Algebra::Reduction: return Kind::Reduction;
    case Algebra::Contraction: return Kind::Contraction;
    case Algebra::Moves: return Kind::Moves;
    case Algebra::Gather: return Kind::Gather;
    case Algebra::Scatter: return Kind::Scatter;
    case Algebra::Norm: return Kind::Norm;
    // Constant and ConstantOfShape values come from their rule (const_dims) or are uniform;
    // Range's values hold their start in every position and sum to a count.
    case Algebra::Source: return Kind::Source;
  }
  ONNX_TV_ASSERT(false, "unknown algebra of " + s.op_type);
  return Kind::Function;
}

// Records a sum along axis `axis` of input `input` for the check to confirm (SumSite), where
// the axis may still shrink.
void confirm_later(Inference& inf, ProgramDims& prog, size_t idx, size_t input, size_t axis,
                   int64_t other = -1, size_t other_axis = 0) {
  const DimValue* v = nullptr;
  const ir::Node& n = prog.graph->nodes[idx];
  if (input < n.inputs.size())
    if (auto it = prog.values.find(n.inputs[input]); it != prog.values.end()) v = &it->second;
  if (!v || axis >= v->dims.size()) return;
  bool shrinks = false;
  for (Var x : inf.dims.leaves(v->dims[axis])) shrinks |= !inf.dims.is_fixed(x);
  if (!shrinks) return;
  if (n.outputs.empty() || n.outputs[0].empty()) return;
  if (inf.counted_sums) {
    auto k = inf.counted_sums->find(counted_sum_key(prog.graph->file, n.outputs[0], input, axis));
    if (k != inf.counted_sums->end()) {
      inf.dims.fix(v->dims[axis], k->second);
      return;
    }
  }
  SumSite s;
  s.rank = &prog == &inf.spec ? -1 : int64_t(&prog - inf.ranks.data());
  s.output = n.outputs[0];
  s.input = input;
  s.axis = axis;
  s.full = inf.dims.full(v->dims[axis]);
  s.other = other;
  s.other_axis = other_axis;
  inf.sum_sites.push_back(s);
}

void fix_counted(Inference& inf, ProgramDims& prog, size_t idx, const VarSet& vars) {
  for (Var v : vars)
    if (!inf.dims.is_fixed(v))
      inf.dims.fix({v}, where(prog, idx) + " sums, along it, a part of its data that does not "
                                          "vary along it, which counts its size");
}

}  // namespace

Axis uniform_axes_of_constant(Inference& inf, const ir::ConstTensor& c, const DimShape& dims) {
  const ir::Shape& s = c.shape;
  const bool reals = !c.reals.empty();
  const size_t n = reals ? c.reals.size() : c.ints.size();
  auto same = [&](size_t i, size_t j) {
    return reals ? (c.reals[i] == c.reals[j] || (c.reals[i] != c.reals[i] && c.reals[j] != c.reals[j]))
                 : c.ints[i] == c.ints[j];
  };
  VarSet out;
  int64_t inner = 1;
  for (size_t a = s.size(); a-- > 0;) {
    const int64_t ext = s[a];
    bool uniform = true;
    // Every element equals the one at index 0 along axis a.
    for (size_t i = 0; i < n && uniform; ++i) {
      const int64_t pos = (int64_t(i) / inner) % std::max<int64_t>(ext, 1);
      if (pos != 0 && !same(i, size_t(int64_t(i) - pos * inner))) uniform = false;
    }
    if (uniform && a < dims.size()) {
      const VarSet l = leaves_of(inf, dims[a]);
      out.insert(l.begin(), l.end());
    }
    inner *= std::max<int64_t>(ext, 1);
  }
  return to_axis(out);
}

void follow_uniform_parts(Inference& inf, ProgramDims& prog, size_t idx,
                          std::vector<DimValue>& outs) {
  const Node& n = prog.graph->nodes[idx];
  std::vector<const DimValue*> all, in;  // every input; the data ones (shape slots left out)
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const std::string& name = n.inputs[k];
    auto it = name.empty() ? prog.values.end() : prog.values.find(name);
    all.push_back(it == prog.values.end() ? nullptr : &it->second);
    in.push_back(is_shape_slot(n, k) ? nullptr : all.back());
  }
  const ops::OpSchema& schema = *ops::schema_of(n);  // infer_node found it
  const Kind kind = kind_of(schema);
  const bool gemm = schema.has_rule(ops::DimRule::Gemm);

  // The counts a sum along a reduced dimension would read.
  if (kind == Kind::Reduction && !in.empty() && in[0]) {
    const Operand x = operand(inf, *in[0], {});
    for (int64_t a : reduced_axes(inf, n, *in[0], all))
      if (a >= 0 && a < int64_t(in[0]->dims.size())) {
        fix_counted(inf, prog, idx, meet(leaves_of(inf, in[0]->dims[size_t(a)]), x.parts));
        confirm_later(inf, prog, idx, 0, size_t(a));
      }
  }
  if (schema.normalizes() && !in.empty() && in[0]) {
    // exp of a varying argument has no common part: only a fully uniform one counts.
    const Operand x = operand(inf, *in[0], {});
    fix_counted(inf, prog, idx, x.uniform);
    for (int64_t a : reduced_axes(inf, n, *in[0], all))
      if (a >= 0 && a < int64_t(in[0]->dims.size())) confirm_later(inf, prog, idx, 0, size_t(a));
  }
  if (kind == Kind::Contraction) {
    // Variables of the inputs that the output does not have are summed over.
    VarSet out_vars, contracted;
    for (const DimValue& o : outs) out_vars = join(out_vars, vars_of(inf, o.dims));
    for (const DimValue* v : in)
      if (v)
        for (Var x : vars_of(inf, v->dims))
          if (!out_vars.count(x)) contracted.insert(x);
    const size_t factors = gemm ? 2 : in.size();
    VarSet counted = contracted;
    for (size_t k = 0; k < factors && k < in.size(); ++k)
      if (in[k]) counted = meet(counted, operand(inf, *in[k], contracted).parts);
    fix_counted(inf, prog, idx, counted);
    if ((gemm || schema.has_rule(ops::DimRule::MatMul)) && in.size() > 1 && in[0] && in[1]) {
      // The factors' products along the contracted axis are confirmed on the values: terms
      // can cancel across the factors (x_k * (1/x_k)) as well as within one.
      const size_t ra = in[0]->dims.size(), rb = in[1]->dims.size();
      const bool ta = gemm && n.attribute("transA") && n.attribute("transA")->i;
      const bool tb = gemm && n.attribute("transB") && n.attribute("transB")->i;
      if (ra >= 1 && rb >= 1)
        confirm_later(inf, prog, idx, 0, ta ? 0 : ra - 1, 1,
                      rb == 1 ? 0 : tb ? rb - 1 : rb - 2);
    }
  }

  for (DimValue& o : outs) {
    const VarSet out_vars = vars_of(inf, o.dims);
    std::vector<Operand> ops;
    for (const DimValue* v : in)
      if (v) ops.push_back(operand(inf, *v, out_vars));
    VarSet uniform, parts;
    auto all_uniform = [&](size_t from, size_t to) {
      VarSet u = out_vars;
      for (size_t k = from; k < to && k < ops.size(); ++k) u = meet(u, ops[k].uniform);
      return u;
    };
    switch (kind) {
      case Kind::Additive:
        uniform = all_uniform(0, ops.size());
        for (const Operand& p : ops) parts = join(parts, p.parts);
        break;
      case Kind::Product:
      case Kind::Contraction: {
        const size_t factors = gemm ? std::min<size_t>(2, ops.size()) : ops.size();
        uniform = all_uniform(0, factors);
        parts = out_vars;
        for (size_t k = 0; k < factors; ++k) parts = meet(parts, ops[k].parts);
        if (gemm && ops.size() > 2) {  // + C
          uniform = meet(uniform, ops[2].uniform);
          parts = join(parts, ops[2].parts);
        }
        break;
      }
      case Kind::Quotient:
      case Kind::Power:  // a part survives a divisor or an exponent that is the same everywhere
        uniform = all_uniform(0, ops.size());
        parts = ops.empty() ? VarSet{} : ops[0].parts;
        for (size_t k = 1; k < ops.size(); ++k) parts = meet(parts, ops[k].uniform);
        break;
      case Kind::Function:
        uniform = all_uniform(0, ops.size());
        parts = uniform;
        break;
      case Kind::Select:
        if (ops.size() == 3) {
          uniform = all_uniform(0, 3);
          parts = join(meet(ops[1].parts, ops[2].parts),
                       meet(ops[0].uniform, join(ops[1].parts, ops[2].parts)));
        }
        break;
      case Kind::Reduction:  // along the remaining variables, as the input
        if (!ops.empty()) uniform = ops[0].uniform, parts = ops[0].parts;
        break;
      case Kind::Norm:
        // (x - mean) * inv_std * scale + bias: along the normalised variables the mean is a
        // part and inv_std is uniform, so a part survives a scale with a part there; along
        // the others inv_std varies wherever x does.
        if (!ops.empty() && in[0]) {
          uniform = all_uniform(0, ops.size());
          VarSet normalised;
          const size_t r = in[0]->dims.size();
          const int64_t a0 = n.attribute("axis") ? n.attribute("axis")->i : -1;
          for (int64_t a = a0 < 0 ? a0 + int64_t(r) : a0; a >= 0 && a < int64_t(r); ++a)
            normalised = join(normalised, leaves_of(inf, in[0]->dims[size_t(a)]));
          parts = ops.size() > 1 && in[1] ? meet(normalised, ops[1].parts) : normalised;
          if (ops.size() > 2 && in[2]) parts = join(parts, ops[2].parts);
        }
        break;
      case Kind::Gather:
        // Along the indices' variables the data is indexed, not broadcast: uniform where the
        // indices repeat or the data is uniform along the gathered axis.
        if (in.size() > 1 && in[0] && in[1]) {
          const size_t r = in[0]->dims.size();
          const int64_t a0 = n.attribute("axis") ? n.attribute("axis")->i : 0;
          const int64_t a = a0 < 0 ? a0 + int64_t(r) : a0;
          const VarSet gathered = a >= 0 && a < int64_t(r) ? leaves_of(inf, in[0]->dims[size_t(a)])
                                                           : VarSet{};
          const VarSet data_u = leaves_of(inf, in[0]->uniform);
          const VarSet data_p = join(leaves_of(inf, in[0]->parts), data_u);
          const VarSet index_vars = vars_of(inf, in[1]->dims);
          const bool along_u = std::includes(data_u.begin(), data_u.end(), gathered.begin(), gathered.end());
          const bool along_p = std::includes(data_p.begin(), data_p.end(), gathered.begin(), gathered.end());
          for (Var v : out_vars) {
            if (index_vars.count(v)) {
              const bool u = along_u || leaves_of(inf, in[1]->uniform).count(v);
              if (u) uniform.insert(v);
              if (u || along_p) parts.insert(v);
            } else {
              if (data_u.count(v)) uniform.insert(v);
              if (data_p.count(v)) parts.insert(v);
            }
          }
        } else {
          parts = out_vars;
        }
        break;
      case Kind::Scatter:
        // Which element an update lands on depends on the indices' values: every direction
        // of the output is taken to hold a uniform part (an over-approximation, so a later
        // sum along any of them keeps it whole).
        uniform = out_vars;
        parts = out_vars;
        break;
      case Kind::Source:
        if (schema.has_rule(ops::DimRule::Constant)) uniform = leaves_of(inf, o.uniform);
        if (schema.has_rule(ops::DimRule::ConstantOfShape)) uniform = out_vars;
        parts = schema.has_rule(ops::DimRule::Range) ? out_vars : uniform;
        break;
      case Kind::Moves:
        // Positions move or repeat: a union over the data operands over-approximates.
        for (const Operand& p : ops) uniform = join(uniform, p.uniform), parts = join(parts, p.parts);
        break;
    }
    o.uniform = to_axis(meet(uniform, out_vars));
    o.parts = to_axis(meet(join(parts, uniform), out_vars));
  }
}

}  // namespace onnx_tv::reduce
