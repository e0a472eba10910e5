// Ops that read or write elements at positions given by an index tensor: GatherElements,
// GatherND, ScatterElements, ScatterND, OneHot. Indices are constants or functions of one
// integer input each (a label, a token id: solver/indicators.cpp), so every output element is
// exact: where an index depends on an input n, the element is the sum over n's values u of
// [n = u] times what index u gives (Gather in constant_ops.cpp is the same idea).
#include <algorithm>
#include <map>

#include "ops/kernel_util.h"
#include "solver/selection_row.h"

namespace onnx_tv::ops::detail {

namespace {

using solver::IntegerFunction;

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

int64_t offset_of(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
  return o;
}

// The element an index function picks, as one value: sum_u [n = u] * data[pick(u)].
template <class Pick>
Value select(Context& ctx, const IntegerFunction& f, Pick pick) {
  std::vector<Value> picks;
  picks.reserve(f.values.size());
  for (const Rational& i : f.values) picks.push_back(pick(i.get_num().get_si()));
  return ctx.from_integer_function(f.input, f.lo, picks);
}

std::vector<Tensor> gather_elements_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const Tensor& ind = input(a, 1);
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), x.rank(), "axis");
  const std::vector<int64_t> xs = strides_of(x.shape);
  std::vector<Value> data;
  data.reserve(ind.data.size());
  std::vector<int64_t> idx(ind.shape.size(), 0);
  if (!ind.data.empty()) do {
    const IntegerFunction f = index_function(a.ctx, ind.data[data.size()], x.shape[size_t(axis)],
                                             axis, "indices (input #1)");
    std::vector<int64_t> at = idx;
    data.push_back(select(a.ctx, f, [&](int64_t i) {
      at[size_t(axis)] = i;
      return x.data[size_t(offset_of(at, xs))];
    }));
  } while (next_index(idx, ind.shape));
  return {ir::make_tensor(x.dtype, ind.shape, std::move(data))};
}

// The k index components of one ND index tuple: each a function of the same integer input (or
// a constant), so the tuple is one function of that input.
struct IndexTuple {
  std::string input;
  int64_t lo = 0;
  std::vector<std::vector<int64_t>> at;  // at[u - lo]: the tuple where the input is u
};

IndexTuple index_tuple(Context& ctx, std::span<const Value> parts, const Shape& dims, size_t first,
                       const std::string& what) {
  std::vector<IntegerFunction> fs;
  IndexTuple t;
  size_t points = 1;
  for (size_t c = 0; c < parts.size(); ++c) {
    fs.push_back(index_function(ctx, parts[c], dims[first + c], int64_t(first + c), what));
    if (fs.back().input.empty()) continue;
    if (!t.input.empty() && t.input != fs.back().input)
      throw Unsupported(what + " combine the integer inputs '" + t.input + "' and '" +
                        fs.back().input + "' in one index tuple");
    t.input = fs.back().input;
    t.lo = fs.back().lo;
    points = fs.back().values.size();
  }
  t.at.assign(points, std::vector<int64_t>(parts.size()));
  for (size_t p = 0; p < points; ++p)
    for (size_t c = 0; c < parts.size(); ++c)
      t.at[p][c] = fs[c].values[fs[c].input.empty() ? 0 : p].get_num().get_si();
  return t;
}

// GatherND with batch_dims b: out[i, rest] = data[i[:b], tuple(i), rest].
std::vector<Tensor> gather_nd_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const Tensor& ind = input(a, 1);
  const int64_t b = attr_int(a.node, "batch_dims", 0);
  const int64_t k = ind.shape.back();
  Shape out(ind.shape.begin(), ind.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  const int64_t rest = product(x.shape, size_t(b + k), x.shape.size());
  const std::vector<int64_t> xs = strides_of(x.shape);
  const Shape tuples(ind.shape.begin(), ind.shape.end() - 1);
  std::vector<Value> data;
  data.reserve(size_t(ir::element_count(out)));
  std::vector<int64_t> i(tuples.size(), 0);
  int64_t n = 0;
  if (ir::element_count(tuples) > 0) do {
    const IndexTuple t = index_tuple(a.ctx, std::span(ind.data).subspan(size_t(n * k), size_t(k)),
                                     x.shape, size_t(b), "indices (input #1)");
    for (int64_t r = 0; r < rest; ++r) {
      std::vector<Value> picks;
      for (const auto& tuple : t.at) {
        std::vector<int64_t> at(i.begin(), i.begin() + b);
        at.insert(at.end(), tuple.begin(), tuple.end());
        at.resize(x.shape.size(), 0);
        picks.push_back(x.data[size_t(offset_of(at, xs) + r)]);
      }
      data.push_back(a.ctx.from_integer_function(t.input, t.lo, picks));
    }
    ++n;
  } while (next_index(i, tuples));
  return {ir::make_tensor(x.dtype, std::move(out), std::move(data))};
}

// Where each update element may land: every (target offset, weight) with weight the 0/1 value
// of landing there. Scatter kernels combine the weights per reduction.
struct Landing {
  int64_t target;
  Value weight;
  std::string input;  // the integer input the weight is [input = value] of, where it is one
  int64_t value = 0;
};

// Whether updates landing on one element with these weights never meet: each weight is
// [s = e] of a selection s (TopK's slots), all slots of one TopK over one row, no two the same
// slot. Distinct slots hold distinct elements, so at most one of them lands.
bool distinct_slots(Context& ctx, const std::vector<const Landing*>& ls) {
  const solver::Selection* first = nullptr;
  std::vector<int64_t> slots;
  for (const Landing* l : ls) {
    const solver::Selection* s = l->input.empty() ? nullptr : ctx.selection(l->input);
    if (!s || l->weight != ctx.indicator(l->input, l->value)) return false;
    if (!first) first = s;
    if (solver::selection_row_key(*s) != solver::selection_row_key(*first) || s->k != first->k ||
        std::find(slots.begin(), slots.end(), s->slot) != slots.end())
      return false;
    slots.push_back(s->slot);
  }
  return true;
}

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reduction_of(const ir::Node& n) {
  const std::string r = attr_string(n, "reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  throw InputError("reduction '" + r + "' is not one of none, add, mul, max, min");
}

// Applies the landings of every update element (in index order, as ONNX's reference does) to
// a copy of the data.
std::vector<Value> scatter(Context& ctx, const ir::Node& node, std::vector<Value> out,
                           const std::vector<std::vector<Landing>>& landings,
                           std::span<const Value> updates) {
  const Reduction red = reduction_of(node);
  // With no reduction, two updates that may land on one element leave it undefined (ONNX):
  // modeled where they land on distinct elements, or never meet (distinct slots of one TopK,
  // as a router scatters its top-k weights): x (1 - sum w) + sum w u.
  if (red == Reduction::None) {
    std::map<int64_t, std::vector<std::pair<size_t, const Landing*>>> at;
    for (size_t u = 0; u < landings.size(); ++u)
      for (const Landing& l : landings[u]) at[l.target].emplace_back(u, &l);
    for (const auto& [target, ls] : at) {
      std::vector<const Landing*> meeting;
      for (const auto& [u, l] : ls) meeting.push_back(l);
      if (ls.size() > 1 && !distinct_slots(ctx, meeting))
        throw Unsupported("two updates may land on element " + std::to_string(target) +
                          " of the output with reduction 'none', where ONNX leaves the result "
                          "undefined");
      Value& o = out[size_t(target)];
      std::vector<Value> weights, parts;
      for (const auto& [u, l] : ls) {
        weights.push_back(l->weight);
        parts.push_back(ctx.mul(l->weight, updates[u]));
      }
      o = ctx.add(ctx.mul(o, ctx.sub(ctx.one(), ctx.sum(weights))), ctx.sum(parts));
    }
    return out;
  }
  for (size_t u = 0; u < landings.size(); ++u)
    for (const Landing& l : landings[u]) {
      Value& o = out[size_t(l.target)];
      const Value upd = updates[u];
      const bool sure = ctx.is_constant(l.weight);  // weight 1: it lands here for every input
      switch (red) {
        case Reduction::None: break;  // above
        case Reduction::Add: o = ctx.add(o, sure ? upd : ctx.mul(l.weight, upd)); break;
        case Reduction::Mul:
          o = sure ? ctx.mul(o, upd)
                   : ctx.mul(o, ctx.add(ctx.one(), ctx.mul(l.weight, ctx.sub(upd, ctx.one()))));
          break;
        case Reduction::Max:
        case Reduction::Min: {
          if (!sure)
            throw Unsupported("reduction 'max' or 'min' at indices that depend on an integer "
                              "input is not modeled");
          const Value two[2] = {o, upd};
          o = red == Reduction::Max ? ctx.max(two) : ctx.min(two);
          break;
        }
      }
    }
  return out;
}

std::vector<Tensor> scatter_elements_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 3);
  const Tensor& x = input(a, 0);
  const Tensor& ind = input(a, 1);
  const Tensor& upd = input(a, 2);
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), x.rank(), "axis");
  const std::vector<int64_t> xs = strides_of(x.shape);
  std::vector<std::vector<Landing>> landings;
  std::vector<int64_t> idx(ind.shape.size(), 0);
  if (!ind.data.empty()) do {
    const IntegerFunction f = index_function(a.ctx, ind.data[landings.size()], x.shape[size_t(axis)],
                                             axis, "indices (input #1)");
    std::vector<Landing> ls;
    std::vector<int64_t> at = idx;
    std::vector<int64_t> seen;
    for (const Rational& v : f.values) {
      const int64_t j = v.get_num().get_si();
      if (std::find(seen.begin(), seen.end(), j) != seen.end()) continue;
      seen.push_back(j);
      at[size_t(axis)] = j;
      ls.push_back({offset_of(at, xs), index_equals(a.ctx, f, j), f.input, j});
    }
    landings.push_back(std::move(ls));
  } while (next_index(idx, ind.shape));
  return {ir::make_tensor(x.dtype, x.shape, scatter(a.ctx, a.node, x.data, landings, upd.data))};
}

// ScatterND: updates[i, rest] goes to data[tuple(i), rest].
std::vector<Tensor> scatter_nd_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 3);
  const Tensor& x = input(a, 0);
  const Tensor& ind = input(a, 1);
  const Tensor& upd = input(a, 2);
  const int64_t k = ind.shape.back();
  const int64_t rest = product(x.shape, size_t(k), x.shape.size());
  const std::vector<int64_t> xs = strides_of(x.shape);
  const int64_t tuples = int64_t(ind.data.size()) / k;
  std::vector<std::vector<Landing>> landings(size_t(tuples * rest));
  for (int64_t n = 0; n < tuples; ++n) {
    const IndexTuple t = index_tuple(a.ctx, std::span(ind.data).subspan(size_t(n * k), size_t(k)),
                                     x.shape, 0, "indices (input #1)");
    std::map<int64_t, std::vector<Value>> by_target;  // offset -> the indicator terms landing
    for (size_t p = 0; p < t.at.size(); ++p) {
      std::vector<int64_t> at = t.at[p];
      at.resize(x.shape.size(), 0);
      by_target[offset_of(at, xs)].push_back(
          t.input.empty() ? a.ctx.one() : a.ctx.indicator(t.input, t.lo + int64_t(p)));
    }
    for (const auto& [target, ws] : by_target) {
      const Value w = a.ctx.sum(ws);
      for (int64_t r = 0; r < rest; ++r) landings[size_t(n * rest + r)].push_back({target + r, w, "", 0});
    }
  }
  return {ir::make_tensor(x.dtype, x.shape, scatter(a.ctx, a.node, x.data, landings, upd.data))};
}

// OneHot: out[..., j, ...] = values[1] where the index is j (negative ones count from the
// end), values[0] elsewhere; an index outside [-depth, depth) gives values[0] everywhere.
std::vector<Tensor> one_hot_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 3);
  const Tensor& ind = input(a, 0);
  const Tensor& values = input(a, 2);
  const std::optional<long long> depth =
      solver::as_int64(truncate(const_rational(a.ctx, input(a, 1).data[0], "depth (input #1)")));
  if (!depth || *depth < 1) throw InputError("depth (input #1) must be a positive number");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", -1), ind.rank() + 1, "axis");
  Shape out = ind.shape;
  out.insert(out.begin() + axis, *depth);
  const auto [outer, n, inner] = split_at(out, axis);
  std::vector<Value> data(size_t(ir::element_count(out)));
  const Value off = values.data[0], on = values.data[1], step = a.ctx.sub(on, off);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t e = 0; e < inner; ++e) {
      std::optional<IntegerFunction> f = a.ctx.as_integer_function(ind.data[size_t(o * inner + e)]);
      if (!f)
        throw Unsupported("indices (input #0) hold " + a.ctx.to_string(ind.data[size_t(o * inner + e)]) +
                          ", which is neither a constant nor a function of one integer input "
                          "with a known range");
      for (Rational& v : f->values) {  // truncated, negatives from the end, outside: none
        v = truncate(v);
        const Rational n((long)*depth);
        if (v < 0) v += n;
        if (v < 0 || v >= n) v = -1;
      }
      for (int64_t j = 0; j < n; ++j)
        data[size_t((o * n + j) * inner + e)] = a.ctx.add(off, a.ctx.mul(index_equals(a.ctx, *f, j), step));
    }
  return {ir::make_tensor(values.dtype, std::move(out), std::move(data))};
}

}  // namespace

void add_index_ops(std::vector<OpSchema>& defs) {
  using enum Algebra;
  add_op(defs, "GatherElements", {11, 13}, gather_elements_kernel,
         {.rule = DimRule::GatherElements, .algebra = Gather, .linearity = Linearity::Joint,
          .movement = Movement::Selects, .data_inputs = 0b1, .linear_inputs = 0b1,
          .index_inputs = 0b10});
  add_op(defs, "GatherND", {11, 12, 13}, gather_nd_kernel,
         {.rule = DimRule::GatherND, .algebra = Gather, .linearity = Linearity::Joint,
          .movement = Movement::Selects, .data_inputs = 0b1, .linear_inputs = 0b1,
          .index_inputs = 0b10});
  // Linear in data and updates together only with reduction none or add; the schema cannot
  // say that per node, so no linearity is claimed.
  add_op(defs, "ScatterElements", {11, 13, 16, 18}, scatter_elements_kernel,
         {.rule = DimRule::ScatterElements, .algebra = Scatter, .data_inputs = 0b101,
          .same_types = 0b101, .index_inputs = 0b10});
  // Scatter-9 is ScatterElements under its first name (deprecated by opset 11).
  add_op(defs, "Scatter", {9}, scatter_elements_kernel,
         {.rule = DimRule::ScatterElements, .algebra = Scatter, .data_inputs = 0b101,
          .same_types = 0b101, .index_inputs = 0b10});
  add_op(defs, "ScatterND", {11, 13, 16, 18}, scatter_nd_kernel,
         {.rule = DimRule::ScatterND, .algebra = Scatter, .data_inputs = 0b101,
          .same_types = 0b101, .index_inputs = 0b10});
  add_op(defs, "OneHot", {9, 11}, one_hot_kernel,
         {.rule = DimRule::OneHot, .algebra = Function, .shape_inputs = 0b10,
          .data_inputs = 0b101, .index_inputs = 0b1, .result = ResultType::Input2,
          .piecewise = true});
}

}  // namespace onnx_tv::ops::detail
