// Dimension rules, one per operator family (ops::DimRule). Each rule ties the axes of a node's
// inputs and outputs together and, where a constant operand carries a position (slice bounds,
// Range start, Trilu offset), makes that position a factor boundary so it can be re-expressed
// at the reduced sizes. A case a rule cannot follow fixes the axes involved (sound, only
// slower) or, when even the full-size shape is out of reach, throws NotApplicable. Nodes are
// validated first (ops/infer_shapes.h): ranks, axes and sizes here are in range.
#include <algorithm>
#include <numeric>
#include <map>
#include <set>

#include "common/errors.h"
#include "ops/infer_shapes.h"
#include "reduce/rule_families.h"

namespace onnx_tv::reduce {

namespace {

using ir::DType;
using ops::DimRule;

int64_t norm(int64_t axis, size_t rank) { return axis < 0 ? axis + int64_t(rank) : axis; }

int64_t attr_or(const ir::Node& n, const char* name, int64_t def) {
  const ir::Attribute* a = n.attribute(name);
  return a ? a->i : def;
}

Axis concat_axes(const DimShape& s, size_t b, size_t e) {
  Axis out;
  for (size_t i = b; i < e; ++i) out.insert(out.end(), s[i].begin(), s[i].end());
  return out;
}

std::vector<DimValue> one(const RuleArgs& r, DimShape d) {
  DimValue v;
  v.dims = std::move(d);
  v.dtype = r.want.empty() ? DType::Undefined : r.want[0].dtype;
  return {std::move(v)};
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
      } else {
        ONNX_TV_ASSERT(ext[off + i] == n, why + ": validated extents do not broadcast");
        inf.dims.unify(out[off + i], a, why);
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

std::vector<DimValue> elementwise(RuleArgs& r) {
  if (r.node.opset < 7 && attr_or(r.node, "broadcast", 0) != 0)
    cannot(r.prog, r.idx, "the legacy broadcast of opset 6 is not followed");
  std::vector<const DimValue*> data;
  for (size_t k = 0; k < r.in.size(); ++k)
    if (r.schema.is_data_input(k)) data.push_back(r.in[k]);
  return one(r, broadcast(r.inf, data, r.here));
}

std::vector<DimValue> same_shape(RuleArgs& r) {
  std::vector<DimValue> outs = one(r, r.need(0).dims);
  for (size_t k = 1; k < r.want.size(); ++k) {  // Dropout's mask
    outs.push_back(outs[0]);
    outs.back().dtype = r.want[k].dtype;
  }
  return outs;
}

std::vector<DimValue> transpose(RuleArgs& r) {
  const DimShape& x = r.need(0).dims;
  std::vector<int64_t> perm;
  if (auto* a = r.node.attribute("perm")) perm = a->ints;
  if (perm.empty())
    for (size_t k = x.size(); k-- > 0;) perm.push_back(int64_t(k));
  DimShape out;
  for (auto p : perm) out.push_back(x[size_t(norm(p, x.size()))]);
  return one(r, out);
}

std::vector<DimValue> matmul(RuleArgs& r) {
  DimShape a = r.need(0).dims, b = r.need(1).dims;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Axis{});
  if (b1) b.push_back(Axis{});
  r.inf.dims.unify(a.back(), b[b.size() - 2], r.here + " (contracted dimension)");
  DimValue ab, bb;
  ab.dims = DimShape(a.begin(), a.end() - 2);
  bb.dims = DimShape(b.begin(), b.end() - 2);
  DimShape out = broadcast(r.inf, {&ab, &bb}, r.here);
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return one(r, out);
}

std::vector<DimValue> gemm(RuleArgs& r) {
  DimShape a = r.need(0).dims, b = r.need(1).dims;
  if (attr_or(r.node, "transA", 0)) std::swap(a[0], a[1]);
  if (attr_or(r.node, "transB", 0)) std::swap(b[0], b[1]);
  r.inf.dims.unify(a[1], b[0], r.here + " (contracted dimension)");
  DimValue o;
  o.dims = {a[0], b[1]};
  DimShape out = o.dims;
  if (r.in.size() > 2 && r.in[2]) out = broadcast(r.inf, {&o, r.in[2]}, r.here);
  return one(r, out);
}

// Einsum's labels tie the dimensions they name. A summed label keeps its full size: the sum
// along it is not followed as MatMul's is (uniform_parts.cpp), so it must not shrink.
std::vector<DimValue> einsum(RuleArgs& r) {
  const std::string eq = r.node.attribute("equation")->s;
  std::vector<ir::Shape> shapes;
  for (size_t n = 0; n < r.in.size(); ++n) shapes.push_back(r.inf.dims.full_shape(r.need(n).dims));
  const std::vector<std::vector<int>> labels = ops::einsum_labels(eq, shapes);
  const std::vector<int>& out_labels = labels.back();
  std::map<int, Axis> axis_of;
  for (size_t n = 0; n < r.in.size(); ++n)
    for (size_t d = 0; d < labels[n].size(); ++d) {
      const Axis& a = r.need(n).dims[d];
      if (r.inf.dims.full(a) == 1) continue;  // size 1 broadcasts
      if (std::find(out_labels.begin(), out_labels.end(), labels[n][d]) == out_labels.end())
        r.inf.dims.fix(a, r.here + " sums along it");
      auto [it, fresh] = axis_of.emplace(labels[n][d], a);
      if (!fresh) r.inf.dims.unify(it->second, a, r.here + " (one label of the equation)");
    }
  DimShape out;
  for (int l : out_labels) {
    auto it = axis_of.find(l);
    out.push_back(it == axis_of.end() ? Axis{} : it->second);
  }
  return one(r, out);
}

std::vector<DimValue> reduce(RuleArgs& r) {
  const DimValue& x = r.need(0);
  std::vector<int64_t> axes;
  bool have_axes = false;
  // Where validation reads them (ops::detail::reduce_axes_of): the attribute, or input #1 at
  // the opsets that made axes an input.
  if (!r.schema.is_shape_input(1)) {
    if (auto* a = r.node.attribute("axes")) axes = a->ints, have_axes = true;
  } else if (r.in.size() > 1 && r.in[1]) {
    axes = r.ints(1, "axes"), have_axes = true;
  }
  const bool keep = attr_or(r.node, "keepdims", 1) != 0;
  const bool noop = attr_or(r.node, "noop_with_empty_axes", 0) != 0;
  if (!have_axes || axes.empty()) {
    if (noop && r.schema.is_shape_input(1)) return one(r, x.dims);
    axes.clear();
    for (size_t k = 0; k < x.dims.size(); ++k) axes.push_back(int64_t(k));
  }
  std::set<int64_t> ax;
  for (auto a : axes) ax.insert(norm(a, x.dims.size()));
  DimShape out;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    if (!ax.count(int64_t(k))) out.push_back(x.dims[k]);
    else if (keep) out.push_back({});
  }
  return one(r, out);
}

std::vector<DimValue> reshape(RuleArgs& r) {
  const DimValue& x = r.need(0);
  (void)r.ints(1, "target shape");  // known: the validated output shape is the target
  ONNX_TV_ASSERT(!r.want.empty() && r.want[0].shape, r.here + ": a known target without a shape");
  const std::vector<int64_t>& target = *r.want[0].shape;
  const std::vector<int64_t> ext = r.inf.dims.full_shape(x.dims);
  DimShape out;
  for (size_t k = 0; k < target.size(); ++k) {
    // Axes copied unchanged keep their dims; the rest are fresh and tied below.
    bool prefix_same = k < x.dims.size();
    for (size_t j = 0; prefix_same && j <= k; ++j) prefix_same = target[j] == ext[j];
    out.push_back(prefix_same ? x.dims[k] : r.inf.dims.fresh(target[k], r.here));
  }
  r.inf.dims.unify(concat_axes(x.dims, 0, x.dims.size()), concat_axes(out, 0, out.size()), r.here);
  return one(r, out);
}

std::vector<DimValue> flatten(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 1), x.dims.size()));
  return one(r, {concat_axes(x.dims, 0, axis), concat_axes(x.dims, axis, x.dims.size())});
}

std::vector<DimValue> squeeze(RuleArgs& r) {
  const DimValue& x = r.need(0);
  // Axes given (even an empty list) are the ones dropped; none given drops every size-1 axis,
  // as the kernel does (ops::detail::squeezed).
  std::vector<int64_t> axes;
  bool given = false;
  if (!r.schema.is_shape_input(1)) {
    if (auto* a = r.node.attribute("axes")) axes = a->ints, given = true;
  } else if (r.in.size() > 1 && r.in[1]) {
    axes = r.ints(1, "axes"), given = true;
  }
  std::set<int64_t> ax;
  for (auto a : axes) ax.insert(norm(a, x.dims.size()));
  DimShape out;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    const bool one_ext = r.inf.dims.full(x.dims[k]) == 1;
    if ((!given && one_ext) || ax.count(int64_t(k))) continue;
    out.push_back(x.dims[k]);
  }
  return one(r, out);
}

std::vector<DimValue> unsqueeze(RuleArgs& r) {
  const DimValue& x = r.need(0);
  std::vector<int64_t> axes;
  if (auto* a = r.node.attribute("axes")) axes = a->ints;
  if (r.schema.is_shape_input(1) && r.in.size() > 1 && r.in[1]) axes = r.ints(1, "axes");
  const size_t rank = x.dims.size() + axes.size();
  std::set<int64_t> ax;
  for (auto a : axes) ax.insert(norm(a, rank));
  DimShape out;
  size_t j = 0;
  for (size_t k = 0; k < rank; ++k) out.push_back(ax.count(int64_t(k)) ? Axis{} : x.dims[j++]);
  return one(r, out);
}

std::vector<DimValue> concat(RuleArgs& r) {
  const size_t rank = r.need(0).dims.size();
  const size_t axis = size_t(norm(r.node.attribute("axis")->i, rank));
  std::vector<Axis> pieces;
  for (auto* v : r.in)
    if (v && r.inf.dims.full(v->dims[axis]) != 0) pieces.push_back(v->dims[axis]);
  DimShape out = r.need(0).dims;
  for (auto* v : r.in)  // the other axes are shared
    for (size_t k = 0; v && k < rank; ++k)
      if (k != axis) r.inf.dims.unify(out[k], v->dims[k], r.here);
  out[axis] = concat_pieces(r.inf, pieces, r.here + " concatenates along it");
  return one(r, out);
}

std::vector<DimValue> split(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 0), x.dims.size()));
  if (r.schema.is_shape_input(1) && r.in.size() > 1 && r.in[1]) (void)r.ints(1, "split sizes");
  std::vector<DimValue> outs;
  int64_t pos = 0;
  for (const ops::OutputInfo& o : r.want) {  // validation gave each piece's size
    const int64_t s = (*o.shape)[axis];
    DimValue v;
    v.dims = x.dims;
    v.dtype = o.dtype;
    v.dims[axis] = take_range(r.inf, x.dims[axis], pos, pos + s, r.here + " splits along it");
    pos += s;
    outs.push_back(std::move(v));
  }
  return outs;
}

std::vector<DimValue> slice(RuleArgs& r) {
  const DimValue& x = r.need(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (!r.schema.is_shape_input(1)) {  // Slice-1: attributes
    starts = r.node.attribute("starts")->ints;
    ends = r.node.attribute("ends")->ints;
    if (auto* a = r.node.attribute("axes")) axes = a->ints;
  } else {
    starts = r.ints(1, "starts");
    ends = r.ints(2, "ends");
    if (r.in.size() > 3 && r.in[3]) axes = r.ints(3, "axes");
    if (r.in.size() > 4 && r.in[4]) steps = r.ints(4, "steps");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  DimShape out = x.dims;
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t a = size_t(norm(axes[k], x.dims.size()));
    const int64_t n = r.inf.dims.full(x.dims[a]);
    const int64_t step = steps.empty() ? 1 : steps[k];
    if (step < 0) {
      r.inf.dims.fix(x.dims[a], r.here + " slices along it backwards");
      cannot(r.prog, r.idx, "a slice with a negative step");
    }
    auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t s = clampi(starts[k]), e = clampi(ends[k]);
    if (step == 1) {
      out[a] = take_range(r.inf, x.dims[a], s, std::max(s, e), r.here + " slices along it");
    } else if (s < step && e >= n && n % step == 0) {
      // Every step-th element from s: the axis as (n / step, step), keeping one inner index.
      auto parts = r.inf.dims.split_inner(x.dims[a], step);
      if (!parts) cannot(r.prog, r.idx, "a strided slice onnx-tv cannot follow");
      r.inf.dims.fix(parts->second, r.here + " takes strided elements along it");
      out[a] = parts->first;
    } else {
      r.inf.dims.fix(x.dims[a], r.here + " slices along it with a step");
      out[a] = r.inf.dims.fresh(e > s ? (e - s - 1) / step + 1 : 0, r.here, true);
    }
  }
  return one(r, out);
}

std::vector<DimValue> expand(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const std::vector<int64_t> target = r.ints(1, "shape");
  const size_t rank = std::max(target.size(), x.dims.size());
  DimShape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t xi = int64_t(k) - int64_t(rank - x.dims.size());
    const int64_t ti = int64_t(k) - int64_t(rank - target.size());
    const Axis xa = xi >= 0 ? x.dims[size_t(xi)] : Axis{};
    const int64_t xe = r.inf.dims.full(xa), te = ti >= 0 ? target[size_t(ti)] : 1;
    if (xe != 1 || te == 1) out[k] = xa;
    else out[k] = r.inf.dims.fresh(te, r.here + " broadcasts to it");
  }
  return one(r, out);
}

std::vector<DimValue> tile(RuleArgs& r) {
  const std::vector<int64_t> reps = r.ints(1, "repeats");
  DimShape out = r.need(0).dims;
  for (size_t k = 0; k < out.size(); ++k) {
    if (reps[k] == 1) continue;
    Axis a = r.inf.dims.fresh(reps[k], r.here + " repeats along it", true);
    a.insert(a.end(), out[k].begin(), out[k].end());
    out[k] = a;
  }
  return one(r, out);
}

std::vector<DimValue> constant_of_shape(RuleArgs& r) {
  return one(r, r.inf.dims.fresh_shape(r.ints(0, "shape"), r.here));
}

std::vector<DimValue> range(RuleArgs& r) {
  const auto s = r.ints(0, "start"), d = r.ints(2, "delta");
  (void)r.ints(1, "limit");
  const int64_t n = (*r.want[0].shape)[0];
  Axis a = r.inf.dims.fresh(n, r.here);
  // Its values are positions: a start that is not a whole number of lengths, or a step other
  // than 1, keeps full size.
  if (s[0] % std::max<int64_t>(n, 1) != 0 || d[0] != 1)
    r.inf.dims.fix(a, r.here + " counts positions that are not whole blocks");
  return one(r, {a});
}

std::vector<DimValue> trilu(RuleArgs& r) {
  const DimValue& x = r.need(0);
  // Trilu keeps an element by comparing its row position with its column position: the two
  // axes must shrink as one (a causal mask over a sequence and itself), else the instance's
  // mask is not the full one restricted (rows 2:4 of a [4, 8] matrix keep 3 to 4 columns of 8,
  // but all of 2). Of different extents, both keep full size.
  if (x.dims.size() >= 2) {
    const Axis& rows = x.dims[x.dims.size() - 2];
    const Axis& cols = x.dims.back();
    const std::string why = r.here + " compares row and column positions";
    const int64_t nr = r.inf.dims.full(rows), nc = r.inf.dims.full(cols);
    // Of different extents (a context-parallel rank's rows against the whole sequence), the
    // longer axis is blocks of the shorter: within a block the two compare as one axis, and a
    // block's index decides the rest (|c - i| is below a block on both sizes).
    const Axis& longer = nr >= nc ? rows : cols;
    const Axis& shorter = nr >= nc ? cols : rows;
    const int64_t n = std::min(nr, nc);
    std::optional<std::pair<Axis, Axis>> parts;
    if (nr != nc && n > 0 && std::max(nr, nc) % n == 0) parts = r.inf.dims.split_inner(longer, n);
    if (nr == nc) {
      r.inf.dims.unify(rows, cols, why);
    } else if (parts) {
      r.inf.dims.unify(parts->second, shorter, why);
    } else {
      r.inf.dims.fix(rows, why);
      r.inf.dims.fix(cols, why);
    }
  }
  if (r.in.size() > 1 && r.in[1]) {
    // An offset k = c + p (c in -1..1) with p a block boundary of the columns (p > 0) or the
    // rows (p < 0) is re-expressed at the reduced sizes; the boundary's outer part is fixed.
    const int64_t k = r.ints(1, "k")[0];
    if (k < -1 || k > 1) {
      const Axis& rows = x.dims[x.dims.size() - 2];
      const Axis& cols = x.dims.back();
      int64_t best_g = 0, best_c = 0;
      for (int64_t c : {0, 1, -1}) {
        const int64_t p = k - c;
        const int64_t g = std::gcd(r.inf.dims.full(p > 0 ? cols : rows), p > 0 ? p : -p);
        if (g > best_g) best_g = g, best_c = c;
      }
      const Axis& a = k - best_c > 0 ? cols : rows;
      auto parts = r.inf.dims.split_inner(a, best_g);
      if (parts) r.inf.dims.fix(parts->first, r.here + " offsets its diagonal by whole blocks");
      else r.inf.dims.fix(a, r.here + " offsets its diagonal");
    }
  }
  return one(r, x.dims);
}

std::vector<DimValue> gather(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const DimValue& ind = r.need(1);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 0), x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " picks elements along it");
  DimShape out(x.dims.begin(), x.dims.begin() + int64_t(axis));
  out.insert(out.end(), ind.dims.begin(), ind.dims.end());
  out.insert(out.end(), x.dims.begin() + int64_t(axis) + 1, x.dims.end());
  return one(r, out);
}

// Ties axis d of two values that are read at the same positions (an index tensor and its data
// off the indexed axis); of different extents the smaller reads a prefix, and both keep full
// size.
void same_positions(RuleArgs& r, const Axis& a, const Axis& b, const std::string& why) {
  if (r.inf.dims.full(a) == r.inf.dims.full(b)) {
    r.inf.dims.unify(a, b, why);
  } else {
    r.inf.dims.fix(a, why);
    r.inf.dims.fix(b, why);
  }
}

std::vector<DimValue> gather_elements(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const DimValue& ind = r.need(1);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 0), x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " picks elements along it");
  for (size_t d = 0; d < x.dims.size() && d < ind.dims.size(); ++d)
    if (d != axis) same_positions(r, x.dims[d], ind.dims[d], r.here + " reads data where its indices are");
  return one(r, ind.dims);
}

std::vector<DimValue> gather_nd(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const DimValue& ind = r.need(1);
  const size_t b = size_t(attr_or(r.node, "batch_dims", 0));
  const size_t k = size_t(r.inf.dims.full(ind.dims.back()));  // indices have rank >= 1
  for (size_t d = 0; d < b; ++d) r.inf.dims.unify(x.dims[d], ind.dims[d], r.here + " batch dimension");
  for (size_t d = b; d < b + k; ++d) r.inf.dims.fix(x.dims[d], r.here + " picks elements along it");
  r.inf.dims.fix(ind.dims.back(), r.here + " reads index tuples along it");
  DimShape out(ind.dims.begin(), ind.dims.end() - 1);
  out.insert(out.end(), x.dims.begin() + int64_t(b + k), x.dims.end());
  return one(r, out);
}

// Scatters: updates that land on one element are combined (added, for the embedding gradient
// that sums the rows of every token with one id), so the axes along which updates are
// enumerated count them: they keep full size.
std::vector<DimValue> scatter_elements(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const DimValue& ind = r.need(1);
  const DimValue& upd = r.need(2);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 0), x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " writes elements along it at indexed positions");
  const std::string why = r.here + " combines the updates that land on one element";
  for (size_t d = 0; d < ind.dims.size() && d < upd.dims.size(); ++d) {
    r.inf.dims.unify(ind.dims[d], upd.dims[d], r.here + " pairs indices with updates");
    if (d == axis) r.inf.dims.fix(ind.dims[d], why);
    else if (d < x.dims.size()) same_positions(r, x.dims[d], ind.dims[d], r.here + " writes data where its updates are");
  }
  return one(r, x.dims);
}

std::vector<DimValue> scatter_nd(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const DimValue& ind = r.need(1);
  const DimValue& upd = r.need(2);
  const size_t k = size_t(r.inf.dims.full(ind.dims.back()));
  for (size_t d = 0; d < k && d < x.dims.size(); ++d)
    r.inf.dims.fix(x.dims[d], r.here + " writes elements along it at indexed positions");
  const std::string why = r.here + " combines the updates that land on one element";
  const size_t lead = ind.dims.size() - 1;
  for (size_t d = 0; d < ind.dims.size(); ++d) r.inf.dims.fix(ind.dims[d], why);
  for (size_t d = 0; d < lead && d < upd.dims.size(); ++d)
    r.inf.dims.unify(ind.dims[d], upd.dims[d], r.here + " pairs index tuples with updates");
  for (size_t d = k; d < x.dims.size() && lead + d - k < upd.dims.size(); ++d)
    r.inf.dims.unify(x.dims[d], upd.dims[lead + d - k], r.here + " writes update slices whole");
  return one(r, x.dims);
}

std::vector<DimValue> one_hot(RuleArgs& r) {
  const DimValue& ind = r.need(0);
  const int64_t depth = r.ints(1, "depth")[0];
  const size_t axis = size_t(norm(attr_or(r.node, "axis", -1), ind.dims.size() + 1));
  DimShape out = ind.dims;
  out.insert(out.begin() + int64_t(axis), r.inf.dims.fresh(depth, r.here));
  r.inf.dims.fix(out[axis], r.here + " compares its indices with positions along it");
  return one(r, out);
}

// Selections compare the elements along their axis with one another: the axis keeps its full
// size, and so do the k slots (TopK) made along it.
std::vector<DimValue> top_k(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", -1), x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " selects along it");
  DimShape out = x.dims;
  // K at its full value: the rewrite writes it so (rewrite.cpp), computed from a shape or not.
  const int64_t k = r.node.opset < 10 ? attr_or(r.node, "k", 1) : r.ints(1, "K")[0];
  out[axis] = r.inf.dims.fresh(k, r.here);
  r.inf.dims.fix(out[axis], r.here + " ranks its selected elements along it");
  std::vector<DimValue> outs = one(r, out);
  DimValue indices;
  indices.dims = out;
  indices.dtype = DType::Int64;
  outs.push_back(std::move(indices));
  return outs;
}

std::vector<DimValue> arg_reduce(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", 0), x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " selects along it");
  DimShape out = x.dims;
  if (attr_or(r.node, "keepdims", 1)) out[axis] = {};
  else out.erase(out.begin() + int64_t(axis));
  return one(r, out);
}

// A prefix sum at one position counts the positions before it: the axis keeps its full size.
std::vector<DimValue> cum_sum(RuleArgs& r) {
  const DimValue& x = r.need(0);
  if (x.dims.empty()) return one(r, x.dims);
  const size_t axis = size_t(norm(r.ints(1, "axis")[0], x.dims.size()));
  r.inf.dims.fix(x.dims[axis], r.here + " sums prefixes along it");
  return one(r, x.dims);
}

std::vector<DimValue> layer_norm(RuleArgs& r) {
  const DimValue& x = r.need(0);
  const size_t axis = size_t(norm(attr_or(r.node, "axis", -1), x.dims.size()));
  for (size_t k = axis; k < x.dims.size(); ++k)
    r.inf.dims.fix(x.dims[k], r.here + " divides by the size of the normalised dimensions");
  // Scale and bias broadcast against X's normalised axes: the same dimensions.
  std::vector<const DimValue*> all = {&x};
  for (size_t k = 1; k < r.in.size() && k < 3; ++k) all.push_back(r.in[k]);
  broadcast(r.inf, all, r.here);
  std::vector<DimValue> outs = one(r, x.dims);
  DimShape stat(x.dims.begin(), x.dims.begin() + int64_t(axis));
  for (size_t k = axis; k < x.dims.size(); ++k) stat.push_back({});
  for (size_t k = 1; k < r.want.size(); ++k) {
    DimValue v;
    v.dims = stat;
    v.dtype = r.want[k].dtype;
    outs.push_back(std::move(v));
  }
  return outs;
}

}  // namespace

const DimValue& RuleArgs::need(size_t k) const {
  ONNX_TV_ASSERT(k < in.size() && in[k], here + ": validated input #" + std::to_string(k) + " missing");
  return *in[k];
}

std::vector<int64_t> RuleArgs::ints(size_t k, const char* what) const {
  const DimValue& v = need(k);
  std::optional<std::vector<int64_t>> out;
  if (v.concrete) out = integer_values(inf, v);
  if (!out)
    cannot(prog, idx, std::string("its ") + what + " (input #" + std::to_string(k) +
                          ") is not a constant onnx-tv can follow");
  return *out;
}

std::vector<DimValue> apply_rule(RuleArgs& r) {
  switch (r.schema.traits.rule) {
    case DimRule::Unset: break;
    case DimRule::Broadcast: return elementwise(r);
    case DimRule::SameShape: return same_shape(r);
    case DimRule::Transpose: return transpose(r);
    case DimRule::MatMul: return matmul(r);
    case DimRule::Gemm: return gemm(r);
    case DimRule::Einsum: return einsum(r);
    case DimRule::Reduce: return reduce(r);
    case DimRule::Reshape: return reshape(r);
    case DimRule::Flatten: return flatten(r);
    case DimRule::Squeeze: return squeeze(r);
    case DimRule::Unsqueeze: return unsqueeze(r);
    case DimRule::Concat: return concat(r);
    case DimRule::Split: return split(r);
    case DimRule::Slice: return slice(r);
    case DimRule::Expand: return expand(r);
    case DimRule::Tile: return tile(r);
    case DimRule::ConstantOfShape: return constant_of_shape(r);
    case DimRule::Range: return range(r);
    case DimRule::Trilu: return trilu(r);
    case DimRule::Gather: return gather(r);
    case DimRule::GatherElements: return gather_elements(r);
    case DimRule::GatherND: return gather_nd(r);
    case DimRule::ScatterElements: return scatter_elements(r);
    case DimRule::ScatterND: return scatter_nd(r);
    case DimRule::OneHot: return one_hot(r);
    case DimRule::TopK: return top_k(r);
    case DimRule::ArgReduce: return arg_reduce(r);
    case DimRule::CumSum: return cum_sum(r);
    case DimRule::LayerNorm: return layer_norm(r);
    case DimRule::Shape:
    case DimRule::Size:
    case DimRule::Constant:
      // Exact small tensors, handled before any rule (rules.cpp); reaching here means a value
      // too large to keep exactly, which no rule follows.
      cannot(r.prog, r.idx, "a " + r.node.op_type + " onnx-tv cannot follow (not a small integer tensor)");
  }
  ONNX_TV_ASSERT(false, r.here + ": no rule for family of " + r.node.op_type);
  return {};
}

}  // namespace onnx_tv::reduce
