// Sizes that reach data by a way other than Shape and Size (docs/shape-reduction.md, "Sizes
// read as values"). The reduced instance keeps two elements per piece, which proves the real
// sizes only where no value counts the elements of a reduced dimension:
// - a sum (or any reduction, softmax or cumulative sum) along a dimension of data that does
//   not depend on the symbolic inputs is a function of the dimension's size: ReduceSum of an
//   all-ones mask is the token count. At the reduced size it would be another number, so a
//   plan that computes a count that way and one that writes it as a literal would part, or a
//   wrong scale could cancel. Such a dimension keeps its full size.
// - positions (the values of a Range along a reduced dimension) are symbols in the instance
//   (solver/positions.cpp), proven as functions of the position, and only two positions'
//   order is decided. Raw positions (computed on without the inputs) that an op would read
//   otherwise keep their dimension at full size, for an exact verdict rather than an
//   undecided one: compared with a literal or a size (`Where(pos < 8190, pos, 8190)`), with
//   shifted or scaled positions (a sliding window) or with another axis's positions,
//   multiplied by positions, divided by them or raised to a power, or used as indices (Gather,
//   GatherElements, the scatters, OneHot: the indexed axis keeps its full size too), or as a
//   size or bound.
// - counts of routing data (a mask of the tokens routed to an expert, summed along the tokens
//   by a CumSum, a MatMul with a triangular matrix, a ReduceSum or an all-reduce) read as
//   indices or by a piecewise op (a token's place against a buffer's capacity): fewer tokens
//   never fill the buffer, so a capacity too small for the real count would pass. The summed
//   dimension (or the ranks summed over) keeps its full size.
#include <algorithm>
#include <set>

#include "ops/registry.h"
#include "reduce/infer.h"

namespace onnx_tv::reduce {

namespace {

using ir::Node;

int64_t norm_axis(int64_t a, size_t rank) { return a < 0 ? a + int64_t(rank) : a; }

void fix_counted(Inference& inf, ProgramDims& prog, size_t idx, const DimShape& dims,
                 const std::vector<int64_t>& axes) {
  for (int64_t a : axes)
    if (a >= 0 && a < int64_t(dims.size()))
      inf.dims.fix(dims[size_t(a)], where(prog, idx) +
                                         " sums data that does not depend on the inputs along "
                                         "it, which counts its size");
}

}  // namespace

// The axes a reduction-like node sums or normalises its data input along.
std::vector<int64_t> reduced_axes(Inference& inf, const Node& n, const DimValue& x,
                                  const std::vector<const DimValue*>& in) {
  const ops::OpSchema* schema = ops::schema_of(n);
  const size_t r = x.dims.size();
  std::vector<int64_t> axes;
  if (!schema || !(schema->normalizes() || schema->has_rule(ops::DimRule::Reduce))) {
    for (size_t k = 0; k < r; ++k) axes.push_back(int64_t(k));  // unknown: all of them
    return axes;
  }
  if (schema->normalizes()) {
    const int64_t def = n.opset < 13 ? 1 : -1;
    const int64_t a = norm_axis(n.attribute("axis") ? n.attribute("axis")->i : def, r);
    if (n.opset < 13)  // the older forms normalise over every axis from `axis` on
      for (int64_t k = a; k < int64_t(r); ++k) axes.push_back(k);
    else
      axes.push_back(a);
    return axes;
  }
  // Reduce*: attribute axes, or input 1 (opset 18, ReduceSum 13); none means all.
  if (auto* a = n.attribute("axes")) axes = a->ints;
  if (in.size() > 1 && in[1])
    if (auto v = integer_values(inf, *in[1])) axes = *v;
  const bool noop = n.attribute("noop_with_empty_axes") && n.attribute("noop_with_empty_axes")->i;
  if (axes.empty() && !noop)
    for (size_t k = 0; k < r; ++k) axes.push_back(int64_t(k));
  for (auto& a : axes) a = norm_axis(a, r);
  return axes;
}

void follow_sizes_as_data(Inference& inf, ProgramDims& prog, size_t idx,
                          std::vector<DimValue>& outs) {
  const Node& n = prog.graph->nodes[idx];
  const ops::OpSchema& schema = *ops::schema_of(n);  // infer_node found it
  std::vector<const DimValue*> in;
  bool symbolic = false;
  Axis positions, offset;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const std::string& name = n.inputs[k];
    auto it = name.empty() ? prog.values.end() : prog.values.find(name);
    in.push_back(it == prog.values.end() ? nullptr : &it->second);
    // Sizes, axes and bounds are not data: the shape of a symbolic tensor is a constant.
    if (!in.back() || is_shape_slot(n, k)) continue;
    symbolic |= in.back()->symbolic;
    add_vars(inf.dims, positions, in.back()->positions);
    add_vars(inf.dims, offset, in.back()->offset_positions);
  }
  const bool moves = schema.traits.movement == ops::Movement::Copies ||
                     schema.traits.movement == ops::Movement::Selects;
  const DimValue* x = in.empty() ? nullptr : in[0];

  // Routing data in, and nothing symbolic but routing data: the output is routing data too,
  // and a sum of it along an axis counts along that axis.
  auto routing = [](const DimValue& v) {
    return v.symbolic && (v.mask || ir::is_integer(v.dtype) || v.dtype == ir::DType::Bool);
  };
  bool any_routing = false, only_routing = true;
  Axis counts;
  for (size_t k = 0; k < in.size(); ++k) {
    if (!in[k] || is_shape_slot(n, k)) continue;
    add_vars(inf.dims, counts, in[k]->counts);
    if (routing(*in[k])) any_routing = true;
    else if (in[k]->symbolic) only_routing = false;
  }
  using ops::Algebra;
  const Algebra alg = schema.traits.algebra;
  // What keeps routing data a count of something: piecewise functions (OneHot, comparisons,
  // Max), sums and differences with anything (mask + (x - x) is still the mask), products and
  // moves of routing data and constants, a quotient by a constant (mask / 1). Not exp, not a
  // product with real data (gates times an expert's output).
  const bool additive = alg == Algebra::Sum || alg == Algebra::Difference;
  const bool by_constant = alg == Algebra::Quotient && in.size() > 1 && in[1] && !in[1]->symbolic;
  const bool mask_out = any_routing &&
                        (additive || by_constant ||
                         (only_routing && (alg != Algebra::Function || schema.traits.piecewise) &&
                          alg != Algebra::Quotient && alg != Algebra::Power && alg != Algebra::Norm));
  if (mask_out && x) {
    if (schema.has_rule(ops::DimRule::Reduce))
      for (int64_t a : reduced_axes(inf, n, *x, in))
        if (a >= 0 && a < int64_t(x->dims.size())) add_vars(inf.dims, counts, x->dims[size_t(a)]);
    if (schema.has_rule(ops::DimRule::CumSum) && in.size() > 1 && in[1] && !x->dims.empty())
      if (auto v = integer_values(inf, *in[1]); v && !v->empty())
        add_vars(inf.dims, counts, x->dims[size_t(norm_axis((*v)[0], x->dims.size()))]);
    const bool gemm = schema.has_rule(ops::DimRule::Gemm);
    if ((gemm || schema.has_rule(ops::DimRule::MatMul)) && !x->dims.empty()) {
      int64_t ka = int64_t(x->dims.size()) - 1;
      if (gemm && n.attribute("transA") && n.attribute("transA")->i) ka = 0;
      add_vars(inf.dims, counts, x->dims[size_t(ka)]);
    }
    // A scatter with a reduction combines the updates that land on one element: along its axis
    // for ScatterElements (the other axes of an update are its element's own), along any axis
    // of the updates for ScatterND. Without one (a mask's ones written at the top-k experts)
    // nothing is combined, so nothing is counted.
    const ir::Attribute* reduction = n.attribute("reduction");
    if (alg == Algebra::Scatter && reduction && reduction->s != "none") {
      const bool elements = n.op_type == "ScatterElements";
      int64_t axis = elements && n.attribute("axis") ? n.attribute("axis")->i : 0;
      for (size_t k = 1; k < in.size(); ++k)
        if (in[k])
          for (size_t d = 0; d < in[k]->dims.size(); ++d)
            if (!elements || int64_t(d) == norm_axis(axis, in[k]->dims.size()))
              add_vars(inf.dims, counts, in[k]->dims[d]);
    }
  }
  if (!counts.empty()) {
    // Read as an integer: by a piecewise op, as an index, cast to an integer type, divided in
    // integers, or computed in a type that wraps.
    bool read = schema.traits.piecewise;
    for (size_t k = 0; k < in.size(); ++k)
      read |= in[k] && schema.is_index_input(k) && !in[k]->counts.empty();
    for (const DimValue& o : outs)
      read |= ir::is_integer(o.dtype) || o.dtype == ir::DType::Bool;
    if (read)
      inf.dims.fix(counts, where(prog, idx) + " reads a count of routing data along it (" +
                               n.op_type + ")");
  }

  if (x && !x->symbolic && !x->concrete) {
    const bool gemm = schema.has_rule(ops::DimRule::Gemm);
    if (schema.has_rule(ops::DimRule::Reduce) || schema.normalizes())
      fix_counted(inf, prog, idx, x->dims, reduced_axes(inf, n, *x, in));
    if ((gemm || schema.has_rule(ops::DimRule::MatMul)) && in.size() > 1 && in[1] &&
        !in[1]->symbolic && !in[1]->concrete) {
      int64_t ka = int64_t(x->dims.size()) - 1;
      if (gemm && n.attribute("transA") && n.attribute("transA")->i) ka = 0;
      fix_counted(inf, prog, idx, x->dims, {ka});
    }
  }

  // Raw positions: positions in data that does not depend on the inputs (a Range's values and
  // what is computed from them alone, a mask). The instance makes a Range's values symbols
  // (solver/positions.cpp), so a step or kink at some position, a product of positions, is
  // never proven from the few positions it keeps: only the order of two positions is decided.
  // Where an op needs more, the positions' axes keep full size, for an exact verdict instead
  // of an undecided one. Positions inside symbolic data (a router's scores after RoPE) are
  // proven as functions of them and need nothing here.
  Axis raw, raw_offset;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] && !is_shape_slot(n, k) && !in[k]->symbolic) {
      add_vars(inf.dims, raw, in[k]->positions);
      add_vars(inf.dims, raw_offset, in[k]->offset_positions);
    }
  if (!raw.empty() && schema.traits.piecewise) {
    // Raw positions read against something that is not raw positions (Clip's bounds and a
    // Mod's divisor are operands too); one operand alone has its steps and kinks at fixed
    // values of the positions.
    size_t operands = 0;
    bool against_other = false;
    PositionCompare compare{where(prog, idx) + " compares positions of two axes along it (" +
                                n.op_type + ")", {}, raw};
    for (const DimValue* v : in)
      if (v) {
        ++operands;
        if (v->positions.empty() || v->symbolic) against_other = true;
        else compare.operands.push_back(v->positions);
      }
    if (operands == 1) against_other = true;
    if (against_other)
      inf.dims.fix(raw, where(prog, idx) + " reads positions along it against a fixed value (" +
                            n.op_type + ")");
    // Positions against positions moved by an offset or a scale (a sliding window's
    // q < k + 100): the instance's few positions never reach the window's edge.
    else if (!raw_offset.empty())
      inf.dims.fix(raw, where(prog, idx) + " compares positions along it after an offset or a "
                                             "scale (" + n.op_type + ")");
    // Positions of two axes the instance shrinks apart (a query's against a key's, from two
    // inputs) are not ordered as the full ones: judged once every axis is tied (infer.cpp).
    else
      inf.position_compares.push_back(std::move(compare));
  }
  // Raw positions times raw positions, or under a division or a power (p^2, 1/p, 2^p).
  if (!raw.empty() && (alg == Algebra::Product || alg == Algebra::Contraction ||
                       alg == Algebra::Quotient || alg == Algebra::Power)) {
    size_t holding = 0;
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] && !is_shape_slot(n, k) && !in[k]->symbolic && !in[k]->positions.empty())
        holding += k > 0 && (alg == Algebra::Quotient || alg == Algebra::Power) ? 2 : 1;
    if (holding >= 2 || alg == Algebra::Power)
      inf.dims.fix(raw, where(prog, idx) + " computes a product, quotient or power of positions "
                                             "along it (" + n.op_type + ")");
  }
  // Positions used as indices are read against the indexed axis, which keeps its full size:
  // a rank's Range(0, 80) + 80 must read rows 80.. of the whole table, and would read them at
  // the reduced size too while the spec's reduced rows moved.
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] && schema.is_index_input(k) && !in[k]->symbolic && !in[k]->positions.empty())
      inf.dims.fix(in[k]->positions, where(prog, idx) + " reads positions along it as indices (" +
                                         n.op_type + ")");
  // A size, axis or bound is read as a number, and the instance's positions are symbols.
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] && is_shape_slot(n, k) && !in[k]->positions.empty())
      inf.dims.fix(in[k]->positions, where(prog, idx) + " reads positions along it as a size or "
                                         "bound (" + n.op_type + ")");
  if (schema.traits.algebra == ops::Algebra::Quotient && !positions.empty() && !outs.empty() && ir::is_integer(outs[0].dtype))
    inf.dims.fix(positions, where(prog, idx) + " divides positions along it in integers");

  const bool sizes = schema.has_rule(ops::DimRule::Shape) || schema.has_rule(ops::DimRule::Size);
  for (DimValue& o : outs) {
    o.symbolic = symbolic && !sizes;
    if (sizes) continue;  // sizes, frozen at their full value
    add_vars(inf.dims, o.positions, positions);
    add_vars(inf.dims, o.offset_positions, moves ? offset : positions);
    o.mask = mask_out;
    add_vars(inf.dims, o.counts, counts);
  }
  if (schema.has_rule(ops::DimRule::Range) && !outs.empty() && !outs[0].concrete && !outs[0].dims.empty())
    add_vars(inf.dims, outs[0].positions, outs[0].dims[0]);
}

}  // namespace onnx_tv::reduce
