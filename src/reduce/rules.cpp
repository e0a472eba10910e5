// Dimension rules, one per operator family. Each rule ties the axes of a node's inputs and
// outputs together and, where a constant operand carries a position (slice bounds, Range start,
// Trilu offset), makes that position a factor boundary so it can be re-expressed at the reduced
// sizes. A case a rule cannot follow fixes the axes involved (sound, only slower) or, when even
// the full-size shape is out of reach, throws NotReducible.
#include <algorithm>
#include <numeric>
#include <set>

#include "common/errors.h"
#include "ops/registry.h"
#include "reduce/infer.h"
#include "solver/rational.h"

namespace onnx_tv::reduce {

namespace {

using ir::DType;
using ir::Node;

constexpr int64_t kConcreteMax = 64;  // elements of an integer tensor known exactly

// Empty when some element is not an integer.
std::vector<int64_t> ints_of(Inference& inf, const DimValue& v) {
  return integer_values(inf, v).value_or(std::vector<int64_t>{});
}

DimValue from_tensor(Inference& inf, ir::Tensor t, bool size_derived, const std::string& origin) {
  DimValue v;
  v.dims = inf.dims.fresh_shape(t.shape, origin + " (integer values known exactly)", /*fixed=*/true);
  v.dtype = t.dtype;
  v.concrete = std::move(t);
  v.size_derived = size_derived;
  return v;
}

int64_t norm(int64_t axis, size_t rank) { return axis < 0 ? axis + int64_t(rank) : axis; }

Axis concat_axes(const DimShape& s, size_t b, size_t e) {
  Axis out;
  for (size_t i = b; i < e; ++i) out.insert(out.end(), s[i].begin(), s[i].end());
  return out;
}

// Ops whose every element depends only on the elements at the same (broadcast) position.
const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> s = {
      "Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log",
      "Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Selu", "Gelu", "Erf", "Softplus",
      "Softsign", "HardSigmoid", "HardSwish", "Mish", "Cos", "Sin", "Tan", "Floor", "Ceil",
      "Round", "Sign", "Identity", "Cast", "CastLike", "Equal", "Less", "LessOrEqual", "Greater",
      "GreaterOrEqual", "And", "Or", "Xor", "Not", "Where", "Max", "Min", "Sum", "Mean", "Clip",
      "IsNaN", "IsInf", "Mod", "BitShift", "PRelu", "Dropout", "ThresholdedRelu", "Celu",
      "Acos", "Asin", "Atan", "Cosh", "Sinh", "Asinh", "Acosh", "Atanh"};
  return s;
}

// Ops cheap and exact on small integer tensors: the shape arithmetic of torch exports.
const std::set<std::string>& shape_arith_ops() {
  static const std::set<std::string> s = {
      "Shape", "Size", "Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Cast", "Mul", "Add",
      "Sub", "Div", "Reshape", "Identity", "Constant", "Equal", "Where", "Range", "Neg", "Abs",
      "ConstantOfShape", "Expand", "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "Max",
      "Min", "Less", "Greater", "Not", "Mod", "Tile", "Transpose", "Flatten", "Floor", "Ceil",
      "Sqrt", "Reciprocal", "And", "Or", "LessOrEqual", "GreaterOrEqual", "CastLike"};
  return s;
}

// Broadcast of the inputs' dims (numpy rules); axes of equal extent are unified.
DimShape broadcast(Inference& inf, const std::vector<const DimValue*>& ins, const std::string& why) {
  size_t rank = 0;
  for (auto* v : ins)
    if (v) rank = std::max(rank, v->dims.size());
  DimShape out(rank);
  std::vector<int64_t> ext(rank, 1);
  for (auto* v : ins) {
    if (!v) continue;
    const size_t off = rank - v->dims.size();
    for (size_t i = 0; i < v->dims.size(); ++i) {
      const Axis& a = v->dims[i];
      const int64_t n = inf.dims.full(a);
      if (n == 1) continue;
      if (ext[off + i] == 1) {
        out[off + i] = a;
        ext[off + i] = n;
      } else if (ext[off + i] == n) {
        inf.dims.unify(out[off + i], a, why);
      } else {
        throw NotReducible{why + ": extents " + std::to_string(ext[off + i]) + " and " +
                           std::to_string(n) + " do not broadcast"};
      }
    }
  }
  return out;
}

// The output axis of taking [s, e) along `a`: the part above gcd(N, s, e) becomes a fixed
// count (the selection must keep its indices), the part below is kept.
Axis take_range(Inference& inf, const Axis& a, int64_t s, int64_t e, const std::string& why) {
  const int64_t n = inf.dims.full(a);
  if (s == 0 && e == n) return a;
  int64_t g = std::gcd(n, std::gcd(s, e));
  auto parts = inf.dims.split_inner(a, g);
  if (!parts) {
    inf.dims.fix(a, why);
    return inf.dims.fresh(e - s, why, true);
  }
  inf.dims.fix(parts->first, why);
  Axis out = inf.dims.fresh((e - s) / g, why, true);
  out.insert(out.end(), parts->second.begin(), parts->second.end());
  return out;
}

// Concatenation (or its inverse, Split) along one axis: every piece is a fixed count of a
// common inner axis when their extents share a factor structure.
Axis concat_pieces(Inference& inf, const std::vector<Axis>& pieces, const std::string& why) {
  int64_t g = 0, total = 0;
  for (const Axis& p : pieces) {
    g = std::gcd(g, inf.dims.full(p));
    total += inf.dims.full(p);
  }
  if (g == 0) return {};
  std::optional<Axis> inner;
  bool ok = true;
  for (const Axis& p : pieces) {
    auto parts = inf.dims.split_inner(p, g);
    if (!parts) {
      ok = false;
      break;
    }
    inf.dims.fix(parts->first, why);
    if (!inner)
      inner = parts->second;
    else
      inf.dims.unify(*inner, parts->second, why);
  }
  if (!ok || !inner) {
    for (const Axis& p : pieces) inf.dims.fix(p, why);
    return inf.dims.fresh(total, why, true);
  }
  Axis out = inf.dims.fresh(total / g, why, true);
  out.insert(out.end(), inner->begin(), inner->end());
  return out;
}

}  // namespace

std::string where(const ProgramDims& prog, size_t i) {
  return prog.label + ": " + prog.graph->nodes[i].describe(i);
}

void cannot(const ProgramDims& prog, size_t i, const std::string& why) {
  throw NotReducible{where(prog, i) + ": " + why};
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
  const std::string& op = n.op_type;
  if (slot == 0) return op == "ConstantOfShape" || op == "Range";
  if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Trilu" || op == "Split" ||
      op == "Squeeze" || op == "Unsqueeze" || op == "Pad" || op == "CumSum" || op == "TopK" ||
      op == "OneHot" || op.rfind("Reduce", 0) == 0 || op == "Range" || op == "Slice")
    return true;
  return false;
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
  const std::string& op = node.op_type;
  const std::string here = where(prog, idx);
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
  auto need = [&](size_t k) -> const DimValue& {
    if (k >= in.size() || !in[k]) cannot(prog, idx, "input #" + std::to_string(k) + " is missing");
    return *in[k];
  };
  auto ints = [&](size_t k, const char* what) {
    const DimValue& v = need(k);
    std::vector<int64_t> out;
    if (v.concrete) out = ints_of(inf, v);
    if (!v.concrete || out.size() != v.concrete->data.size())
      cannot(prog, idx, std::string("its ") + what + " (input #" + std::to_string(k) +
                            ") is not a constant onnx-tv can follow");
    return out;
  };
  auto one = [&](DimShape d, DType t) {
    DimValue v;
    v.dims = std::move(d);
    v.dtype = t;
    return std::vector<DimValue>{std::move(v)};
  };

  // Shape arithmetic on exact small tensors: run the kernel itself.
  if (op == "Shape" || op == "Size") {
    const DimValue& x = need(0);
    std::vector<int64_t> ext = inf.dims.full_shape(x.dims);
    std::vector<int64_t> vals;
    if (op == "Size") {
      int64_t n = 1;
      for (auto e : ext) n *= e;
      vals = {n};
    } else {
      int64_t s = 0;
      int64_t e = int64_t(ext.size());
      if (auto* a = node.attribute("start")) s = std::clamp<int64_t>(norm(a->i, ext.size()), 0, e);
      if (auto* a = node.attribute("end")) e = std::clamp<int64_t>(norm(a->i, ext.size()), 0, e);
      for (int64_t k = s; k < e; ++k) vals.push_back(ext[size_t(k)]);
    }
    std::vector<solver::Value> data;
    for (auto v : vals) data.push_back(inf.ctx.constant((long long)v));
    ir::Shape shape = op == "Size" ? ir::Shape{} : ir::Shape{int64_t(vals.size())};
    return {from_tensor(inf, ir::make_tensor(DType::Int64, shape, std::move(data)), true, here)};
  }
  if (op == "Constant") {
    if (const ir::Attribute* a = node.attribute("value"); a && a->kind == ir::Attribute::Kind::Tensor)
      return {const_dims(inf, *a->tensor, here)};
  }
  bool all_concrete = !node.inputs.empty() || op == "Constant";
  bool size_derived = false;
  for (auto* v : in) {
    if (v && !v->concrete) all_concrete = false;
    if (v && v->size_derived) size_derived = true;
  }
  if (all_concrete && shape_arith_ops().count(op)) {
    std::vector<const ir::Tensor*> ts;
    for (auto* v : in) ts.push_back(v ? &*v->concrete : nullptr);
    bool small = true;  // ops that can build big tensors from small ones
    if (op == "ConstantOfShape" || op == "Expand" || op == "Tile" || op == "Range") {
      std::vector<int64_t> a = ints_of(inf, *in[op == "ConstantOfShape" ? 0 : 1]);
      int64_t n = 1;
      for (auto x : a) n *= std::max<int64_t>(x, 1);
      if (op == "Range") {
        auto s = ints_of(inf, *in[0]), l = ints_of(inf, *in[1]), d = ints_of(inf, *in[2]);
        n = (s.size() == 1 && l.size() == 1 && d.size() == 1 && d[0] != 0)
                ? std::max<int64_t>(0, (l[0] - s[0] + d[0] - (d[0] > 0 ? 1 : -1)) / d[0])
                : kConcreteMax + 1;
      } else if (op != "ConstantOfShape") {
        n *= ir::element_count(in[0]->concrete->shape);
      }
      small = n <= kConcreteMax;
    }
    if (small) {
      std::vector<ir::Tensor> outs;
      try {
        outs = ops::run_node(inf.ctx, node, idx, ts);
      } catch (Error& e) {
        e.add_context(prog.label);  // run_node names the node
        throw;
      }
      bool keep = true;
      for (auto& t : outs)
        // Only integers stay exact: a size cast to float is data, frozen at full size where
        // it is read (rewrite.cpp), so no irrational value ever needs storing.
        if (t.size() > kConcreteMax || !(ir::is_integer(t.dtype) || t.dtype == DType::Bool))
          keep = false;
      if (keep) {
        std::vector<DimValue> res;
        for (auto& t : outs) res.push_back(from_tensor(inf, std::move(t), size_derived, here));
        return res;
      }
    }
  }
  if (op == "Constant") cannot(prog, idx, "a Constant onnx-tv cannot follow (sparse or float list)");

  if (elementwise_ops().count(op)) {
    std::vector<const DimValue*> data;
    for (size_t k = 0; k < in.size(); ++k)
      if (!(op == "Dropout" && k > 0) && !(op == "Clip" && k > 0)) data.push_back(in[k]);
    DimShape d = broadcast(inf, data, here);
    DType t = need(0).dtype;
    if (op == "Where") t = need(1).dtype;
    if (op == "CastLike") t = need(1).dtype;
    if (op == "Cast") t = DType(node.attribute("to") ? int(node.attribute("to")->i) : int(t));
    std::vector<DimValue> outs = one(d, t);
    if (op == "Dropout" && node.outputs.size() > 1) outs.push_back(outs[0]);
    return outs;
  }
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax" || op == "CumSum")
    return one(need(0).dims, need(0).dtype);
  if (op == "Transpose") {
    const DimShape& x = need(0).dims;
    std::vector<int64_t> perm;
    if (auto* a = node.attribute("perm")) perm = a->ints;
    if (perm.empty())
      for (size_t k = x.size(); k-- > 0;) perm.push_back(int64_t(k));
    DimShape out;
    for (auto p : perm) out.push_back(x.at(size_t(norm(p, x.size()))));
    return one(out, need(0).dtype);
  }
  if (op == "MatMul") {
    DimShape a = need(0).dims, b = need(1).dims;
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), Axis{});
    if (b1) b.push_back(Axis{});
    inf.dims.unify(a.back(), b[b.size() - 2], here + " (contracted dimension)");
    DimValue ab, bb;
    ab.dims = DimShape(a.begin(), a.end() - 2);
    bb.dims = DimShape(b.begin(), b.end() - 2);
    DimShape out = broadcast(inf, {&ab, &bb}, here);
    if (!a1) out.push_back(a[a.size() - 2]);
    if (!b1) out.push_back(b.back());
    return one(out, need(0).dtype);
  }
  if (op == "Gemm") {
    DimShape a = need(0).dims, b = need(1).dims;
    if (auto* t = node.attribute("transA"); t && t->i) std::swap(a[0], a[1]);
    if (auto* t = node.attribute("transB"); t && t->i) std::swap(b[0], b[1]);
    inf.dims.unify(a[1], b[0], here + " (contracted dimension)");
    DimValue o;
    o.dims = {a[0], b[1]};
    DimShape out = o.dims;
    if (in.size() > 2 && in[2]) out = broadcast(inf, {&o, in[2]}, here);
    return one(out, need(0).dtype);
  }
  if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    const DimValue& x = need(0);
    std::vector<int64_t> axes;
    bool have_axes = false;
    if (auto* a = node.attribute("axes")) axes = a->ints, have_axes = true;
    if (auto* a = node.attribute("axis")) axes = {a->i}, have_axes = true;
    if (in.size() > 1 && in[1]) axes = ints(1, "axes"), have_axes = true;
    const bool keep = node.attribute("keepdims") ? node.attribute("keepdims")->i != 0 : true;
    const bool noop = node.attribute("noop_with_empty_axes") && node.attribute("noop_with_empty_axes")->i;
    if (!have_axes || axes.empty()) {
      if (noop && op.rfind("Reduce", 0) == 0) return one(x.dims, x.dtype);
      axes.clear();
      if (op == "ArgMax" || op == "ArgMin") axes = {0};
      else
        for (size_t k = 0; k < x.dims.size(); ++k) axes.push_back(int64_t(k));
    }
    std::set<int64_t> ax;
    for (auto a : axes) ax.insert(norm(a, x.dims.size()));
    if (op == "ArgMax" || op == "ArgMin")  // the result is a position along the axis
      for (auto a : ax) inf.dims.fix(x.dims[size_t(a)], here + " returns positions along it");
    DimShape out;
    for (size_t k = 0; k < x.dims.size(); ++k) {
      if (!ax.count(int64_t(k))) out.push_back(x.dims[k]);
      else if (keep) out.push_back({});
    }
    return one(out, op[0] == 'A' ? DType::Int64 : x.dtype);
  }
  if (op == "Reshape") {
    const DimValue& x = need(0);
    std::vector<int64_t> target = ints(1, "target shape");
    const bool allowzero = node.attribute("allowzero") && node.attribute("allowzero")->i;
    std::vector<int64_t> ext = inf.dims.full_shape(x.dims);
    int64_t total = 1, known = 1, infer = -1;
    for (auto e : ext) total *= e;
    for (size_t k = 0; k < target.size(); ++k) {
      if (target[k] == 0 && !allowzero && k < ext.size()) target[k] = ext[k];
      if (target[k] == -1) infer = int64_t(k);
      else known *= target[k];
    }
    if (infer >= 0) target[size_t(infer)] = known ? total / known : 0;
    DimShape out;
    for (size_t k = 0; k < target.size(); ++k) {
      // Axes copied unchanged keep their dims; the rest are fresh and tied below.
      if (k < x.dims.size() && target[k] == ext[k] && k + 1 <= target.size()) {
        bool prefix_same = true;
        for (size_t j = 0; j < k; ++j) prefix_same &= target[j] == ext[j];
        if (prefix_same) {
          out.push_back(x.dims[k]);
          continue;
        }
      }
      out.push_back(inf.dims.fresh(target[k], here));
    }
    inf.dims.unify(concat_axes(x.dims, 0, x.dims.size()), concat_axes(out, 0, out.size()), here);
    return one(out, x.dtype);
  }
  if (op == "Flatten") {
    const DimValue& x = need(0);
    int64_t axis = norm(node.attribute("axis") ? node.attribute("axis")->i : 1, x.dims.size());
    return one({concat_axes(x.dims, 0, size_t(axis)), concat_axes(x.dims, size_t(axis), x.dims.size())},
               x.dtype);
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    const DimValue& x = need(0);
    std::vector<int64_t> axes;
    if (auto* a = node.attribute("axes")) axes = a->ints;
    if (in.size() > 1 && in[1]) axes = ints(1, "axes");
    DimShape out = x.dims;
    if (op == "Squeeze") {
      std::set<int64_t> ax;
      for (auto a : axes) ax.insert(norm(a, x.dims.size()));
      out.clear();
      for (size_t k = 0; k < x.dims.size(); ++k) {
        const bool one_ext = inf.dims.full(x.dims[k]) == 1;
        if ((ax.empty() && one_ext) || ax.count(int64_t(k))) continue;
        out.push_back(x.dims[k]);
      }
    } else {
      const size_t r = x.dims.size() + axes.size();
      std::set<int64_t> ax;
      for (auto a : axes) ax.insert(norm(a, r));
      out.clear();
      size_t j = 0;
      for (size_t k = 0; k < r; ++k) out.push_back(ax.count(int64_t(k)) ? Axis{} : x.dims[j++]);
    }
    return one(out, x.dtype);
  }
  if (op == "Concat") {
    int64_t axis = node.attribute("axis") ? node.attribute("axis")->i : 0;
    const size_t r = need(0).dims.size();
    axis = norm(axis, r);
    std::vector<Axis> pieces;
    std::vector<const DimValue*> others;
    for (auto* v : in) {
      if (!v) continue;
      if (inf.dims.full(v->dims[size_t(axis)]) == 0) continue;
      pieces.push_back(v->dims[size_t(axis)]);
    }
    DimShape out = need(0).dims;
    for (auto* v : in)  // the other axes are shared
      for (size_t k = 0; v && k < r; ++k)
        if (int64_t(k) != axis) inf.dims.unify(out[k], v->dims[k], here);
    out[size_t(axis)] = concat_pieces(inf, pieces, here + " concatenates along it");
    return one(out, need(0).dtype);
  }
  if (op == "Split") {
    const DimValue& x = need(0);
    int64_t axis = norm(node.attribute("axis") ? node.attribute("axis")->i : 0, x.dims.size());
    const int64_t n = inf.dims.full(x.dims[size_t(axis)]);
    std::vector<int64_t> sizes;
    if (auto* a = node.attribute("split")) sizes = a->ints;
    if (in.size() > 1 && in[1]) sizes = ints(1, "split sizes");
    const int64_t k = int64_t(node.outputs.size());
    if (sizes.empty()) {
      const int64_t c = (n + k - 1) / k;
      for (int64_t j = 0; j < k; ++j) sizes.push_back(std::min(c, n - j * c));
    }
    std::vector<DimValue> outs;
    int64_t pos = 0;
    for (auto s : sizes) {
      DimValue v;
      v.dims = x.dims;
      v.dtype = x.dtype;
      v.dims[size_t(axis)] = take_range(inf, x.dims[size_t(axis)], pos, pos + s,
                                        here + " splits along it");
      pos += s;
      outs.push_back(std::move(v));
    }
    return outs;
  }
  if (op == "Slice") {
    const DimValue& x = need(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (node.opset < 10) {
      if (auto* a = node.attribute("starts")) starts = a->ints;
      if (auto* a = node.attribute("ends")) ends = a->ints;
      if (auto* a = node.attribute("axes")) axes = a->ints;
    } else {
      starts = ints(1, "starts");
      ends = ints(2, "ends");
      if (in.size() > 3 && in[3]) axes = ints(3, "axes");
      if (in.size() > 4 && in[4]) steps = ints(4, "steps");
    }
    if (axes.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
    DimShape out = x.dims;
    for (size_t k = 0; k < starts.size(); ++k) {
      const size_t a = size_t(norm(axes[k], x.dims.size()));
      const int64_t n = inf.dims.full(x.dims[a]);
      const int64_t step = steps.empty() ? 1 : steps[k];
      if (step <= 0) {
        inf.dims.fix(x.dims[a], here + " slices along it backwards");
        cannot(prog, idx, "a slice with a negative step");
      }
      auto clampi = [&](int64_t v) {
        if (v < 0) v += n;
        return std::clamp<int64_t>(v, 0, n);
      };
      const int64_t s = clampi(starts[k]), e = clampi(ends[k]);
      if (step == 1) {
        out[a] = take_range(inf, x.dims[a], s, std::max(s, e), here + " slices along it");
      } else if (step > 1 && s < step && e >= n && n % step == 0) {
        // Every step-th element from s: the axis as (n / step, step), keeping one inner index.
        auto parts = inf.dims.split_inner(x.dims[a], step);
        if (!parts) cannot(prog, idx, "a strided slice onnx-tv cannot follow");
        inf.dims.fix(parts->second, here + " takes strided elements along it");
        out[a] = parts->first;
      } else {
        inf.dims.fix(x.dims[a], here + " slices along it with a step");
        const int64_t cnt = std::max<int64_t>(0, (e - s + step - 1) / step);
        out[a] = inf.dims.fresh(cnt, here, true);
      }
    }
    return one(out, x.dtype);
  }
  if (op == "Expand") {
    const DimValue& x = need(0);
    std::vector<int64_t> target = ints(1, "shape");
    const size_t r = std::max(target.size(), x.dims.size());
    DimShape out(r);
    for (size_t k = 0; k < r; ++k) {
      const int64_t xi = int64_t(k) - int64_t(r - x.dims.size());
      const int64_t ti = int64_t(k) - int64_t(r - target.size());
      const Axis xa = xi >= 0 ? x.dims[size_t(xi)] : Axis{};
      const int64_t xe = inf.dims.full(xa), te = ti >= 0 ? target[size_t(ti)] : 1;
      if (xe != 1 || te == 1) out[k] = xa;
      else out[k] = inf.dims.fresh(te, here + " broadcasts to it");
    }
    return one(out, x.dtype);
  }
  if (op == "Tile") {
    const DimValue& x = need(0);
    std::vector<int64_t> reps = ints(1, "repeats");
    DimShape out = x.dims;
    for (size_t k = 0; k < out.size() && k < reps.size(); ++k) {
      if (reps[k] == 1) continue;
      Axis a = inf.dims.fresh(reps[k], here + " repeats along it", true);
      a.insert(a.end(), out[k].begin(), out[k].end());
      out[k] = a;
    }
    return one(out, x.dtype);
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = ints(0, "shape");
    DType t = DType::Float;
    if (auto* a = node.attribute("value"); a && a->tensor) t = a->tensor->dtype;
    return one(inf.dims.fresh_shape(shape, here), t);
  }
  if (op == "Range") {
    auto s = ints(0, "start"), l = ints(1, "limit"), d = ints(2, "delta");
    if (s.size() != 1 || l.size() != 1 || d.size() != 1 || d[0] == 0)
      cannot(prog, idx, "Range bounds that are not integer scalars");
    const int64_t n = std::max<int64_t>(0, (l[0] - s[0] + d[0] - (d[0] > 0 ? 1 : -1)) / d[0]);
    Axis a = inf.dims.fresh(n, here);
    // Its values are positions: a start that is not a whole number of lengths, or a step other
    // than 1, keeps full size.
    if (s[0] % std::max<int64_t>(n, 1) != 0 || d[0] != 1)
      inf.dims.fix(a, here + " counts positions that are not whole blocks");
    return one({a}, need(0).dtype);
  }
  if (op == "Trilu") {
    const DimValue& x = need(0);
    if (in.size() > 1 && in[1] && x.dims.size() >= 2) {
      // An offset k = c + p (c in -1..1) with p a block boundary of the columns (p > 0) or the
      // rows (p < 0) is re-expressed at the reduced sizes; the boundary's outer part is fixed.
      const int64_t k = ints(1, "k")[0];
      if (k < -1 || k > 1) {
        const Axis& rows = x.dims[x.dims.size() - 2];
        const Axis& cols = x.dims.back();
        int64_t best_g = 0, best_c = 0;
        for (int64_t c : {0, 1, -1}) {
          const int64_t p = k - c;
          const int64_t g = std::gcd(inf.dims.full(p > 0 ? cols : rows), p > 0 ? p : -p);
          if (g > best_g) best_g = g, best_c = c;
        }
        const Axis& a = k - best_c > 0 ? cols : rows;
        auto parts = inf.dims.split_inner(a, best_g);
        if (parts) inf.dims.fix(parts->first, here + " offsets its diagonal by whole blocks");
        else inf.dims.fix(a, here + " offsets its diagonal");
      }
    }
    return one(x.dims, x.dtype);
  }
  if (op == "Gather") {
    const DimValue& x = need(0);
    const DimValue& ind = need(1);
    int64_t axis = norm(node.attribute("axis") ? node.attribute("axis")->i : 0, x.dims.size());
    inf.dims.fix(x.dims[size_t(axis)], here + " picks elements along it");
    DimShape out(x.dims.begin(), x.dims.begin() + axis);
    out.insert(out.end(), ind.dims.begin(), ind.dims.end());
    out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
    return one(out, x.dtype);
  }
  if (op == "LayerNormalization") {
    const DimValue& x = need(0);
    int64_t axis = norm(node.attribute("axis") ? node.attribute("axis")->i : -1, x.dims.size());
    for (size_t k = size_t(axis); k < x.dims.size(); ++k)
      inf.dims.fix(x.dims[k], here + " divides by the size of the normalised dimensions");
    // Scale and bias broadcast against X's normalised axes: the same dimensions.
    std::vector<const DimValue*> all = {&x};
    for (size_t k = 1; k < in.size() && k < 3; ++k) all.push_back(in[k]);
    broadcast(inf, all, here);
    std::vector<DimValue> outs = one(x.dims, x.dtype);
    DimShape stat(x.dims.begin(), x.dims.begin() + axis);
    for (size_t k = size_t(axis); k < x.dims.size(); ++k) stat.push_back({});
    for (size_t k = 1; k < node.outputs.size(); ++k) outs.push_back(one(stat, x.dtype)[0]);
    return outs;
  }
  cannot(prog, idx, "onnx-tv has no dimension rule for " + op);
}

}  // namespace onnx_tv::reduce
