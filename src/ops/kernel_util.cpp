#include "ops/kernel_util.h"

#include <algorithm>
#include <cmath>

namespace onnx_tv::ops::detail {

namespace {

const char* kind_name(ir::Attribute::Kind k) {
  using K = ir::Attribute::Kind;
  switch (k) {
    case K::Int: return "int";
    case K::Float: return "float";
    case K::String: return "string";
    case K::Ints: return "ints";
    case K::Floats: return "floats";
    case K::Strings: return "strings";
    case K::Tensor: return "tensor";
    case K::Graph: return "graph";
  }
  return "?";
}

std::string ints_string(std::span<const int64_t> v) {
  return ir::shape_string(Shape(v.begin(), v.end()));
}

}  // namespace

// ---- inputs ----

std::string input_label(const KernelArgs& a, size_t i) {
  std::string name = i < a.node.inputs.size() ? a.node.inputs[i] : "";
  return "input #" + std::to_string(i) + (name.empty() ? "" : " ('" + name + "')");
}

const Tensor* optional_input(const KernelArgs& a, size_t i) {
  return i < a.inputs.size() ? a.inputs[i] : nullptr;
}

const Tensor& input(const KernelArgs& a, size_t i) {
  const Tensor* t = optional_input(a, i);
  if (!t) throw InputError("required input #" + std::to_string(i) + " is missing");
  return *t;
}

void expect_input_count(const KernelArgs& a, size_t min, size_t max) {
  // Trailing omitted optional inputs do not count.
  size_t n = a.inputs.size();
  while (n > 0 && a.inputs[n - 1] == nullptr) --n;
  if (n < min || n > max) {
    std::string want = min == max ? std::to_string(min)
                                  : std::to_string(min) + " to " + std::to_string(max);
    throw InputError("expects " + want + " inputs, has " + std::to_string(n));
  }
}

Rational const_rational(Context& ctx, Value v, const std::string& what) {
  if (!v.is_finite()) throw InputError(what + " holds an infinity where a finite number is needed");
  std::optional<Rational> r = ctx.as_rational(v);
  if (!r) {
    throw Unsupported(what + " must be a constant, but holds the symbolic value " +
                      ctx.to_string(v));
  }
  return *r;
}

std::vector<int64_t> const_ints(Context& ctx, const Tensor& t, const std::string& what) {
  std::vector<int64_t> out;
  out.reserve(t.data.size());
  for (Value v : t.data) {
    Rational r = const_rational(ctx, v, what);
    std::optional<long long> i = solver::as_int64(r);
    if (!i) throw InputError(what + " holds " + solver::to_string(r) + ", not an int64");
    out.push_back(*i);
  }
  return out;
}

int64_t const_int_scalar(Context& ctx, const Tensor& t, const std::string& what) {
  if (t.data.size() != 1) {
    throw InputError(what + " must hold one element, has shape " + ir::shape_string(t.shape));
  }
  return const_ints(ctx, t, what)[0];
}

// ---- attributes ----

const ir::Attribute* attr(const ir::Node& n, const std::string& name, ir::Attribute::Kind kind) {
  const ir::Attribute* a = n.attribute(name);
  if (a && a->kind != kind) {
    throw InputError("attribute '" + name + "' must be of type " + kind_name(kind) + ", is " +
                     kind_name(a->kind));
  }
  return a;
}

const ir::Attribute& required_attr(const ir::Node& n, const std::string& name,
                                   ir::Attribute::Kind kind) {
  const ir::Attribute* a = attr(n, name, kind);
  if (!a) throw InputError("required attribute '" + name + "' is missing");
  return *a;
}

int64_t attr_int(const ir::Node& n, const std::string& name, int64_t def) {
  return attr_int_opt(n, name).value_or(def);
}

std::optional<int64_t> attr_int_opt(const ir::Node& n, const std::string& name) {
  const ir::Attribute* a = attr(n, name, ir::Attribute::Kind::Int);
  if (!a) return std::nullopt;
  return a->i;
}

std::optional<std::vector<int64_t>> attr_ints_opt(const ir::Node& n, const std::string& name) {
  const ir::Attribute* a = attr(n, name, ir::Attribute::Kind::Ints);
  if (!a) return std::nullopt;
  return a->ints;
}

std::string attr_string(const ir::Node& n, const std::string& name, const std::string& def) {
  const ir::Attribute* a = attr(n, name, ir::Attribute::Kind::String);
  return a ? a->s : def;
}

static Value float32_value(Context& ctx, double f, const std::string& what) {
  if (std::isnan(f)) throw MathError(what + " is NaN");
  if (std::isinf(f)) return f > 0 ? Context::pos_inf() : Context::neg_inf();
  return ctx.constant(solver::float_meaning(f, solver::FloatFormat::Float32));
}

Value attr_float(Context& ctx, const ir::Node& n, const std::string& name, float def) {
  const ir::Attribute* a = attr(n, name, ir::Attribute::Kind::Float);
  return float32_value(ctx, a ? a->f : double(def), "attribute '" + name + "'");
}

std::vector<Value> float_values(Context& ctx, const std::vector<double>& fs) {
  std::vector<Value> out;
  out.reserve(fs.size());
  for (double f : fs) out.push_back(float32_value(ctx, f, "float attribute"));
  return out;
}

// ---- axes ----

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    throw InputError(what + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank) + " (valid: " + std::to_string(-rank) + " to " +
                     std::to_string(rank - 1) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const std::string& what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, what);
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      throw InputError(what + " " + ints_string(axes) + " name axis " + std::to_string(n) +
                       " twice");
    }
    out.push_back(n);
  }
  return out;
}

// ---- broadcasting ----

Shape broadcast_shapes(std::span<const Shape> shapes, const std::string& what) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + ir::shape_string(t);
      throw InputError(what + ": shapes " + all + " do not broadcast (dimension " +
                       std::to_string(off + i) + ": " + std::to_string(o) + " vs " +
                       std::to_string(d) + ")");
    }
  }
  return out;
}

std::vector<int64_t> broadcast_map(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), off = rank - in.size();
  // Stride of each output dimension in the input; 0 where the input is broadcast.
  std::vector<int64_t> in_strides = ir::strides(in), st(rank, 0);
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : in_strides[i];
  const int64_t n = ir::element_count(out);
  std::vector<int64_t> map(n);
  std::vector<int64_t> idx(rank, 0);
  int64_t pos = 0;
  for (int64_t k = 0; k < n; ++k) {
    map[k] = pos;
    // Row-major increment, updating the input position incrementally.
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out[d]) {
        pos += st[d];
        break;
      }
      pos -= st[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
  return map;
}

void check_broadcasts_to(const Shape& in, const Shape& out, const std::string& what) {
  bool ok = in.size() <= out.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    int64_t d = in[i], o = out[out.size() - in.size() + i];
    ok = d == o || d == 1;
  }
  if (!ok) {
    throw InputError(what + " has shape " + ir::shape_string(in) +
                     ", which does not broadcast to " + ir::shape_string(out));
  }
}

Tensor broadcast_to(const Tensor& t, const Shape& out, const std::string& what) {
  check_broadcasts_to(t.shape, out, what);
  std::vector<int64_t> map = broadcast_map(t.shape, out);
  std::vector<Value> data;
  data.reserve(map.size());
  for (int64_t k : map) data.push_back(t.data[k]);
  return ir::make_tensor(t.dtype, out, std::move(data));
}

// ---- shapes and indices ----

bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

AxisSplit split_at(const Shape& s, int64_t axis) {
  return {product(s, 0, size_t(axis)), s[size_t(axis)], product(s, size_t(axis) + 1, s.size())};
}

solver::IntegerFunction index_function(Context& ctx, Value v, int64_t dim, int64_t axis,
                                       const std::string& what) {
  std::optional<solver::IntegerFunction> f = ctx.as_integer_function(v);
  if (!f)
    throw Unsupported(what + " hold " + ctx.to_string(v) +
                      ", which is neither a constant nor a function of one integer input "
                      "with a known range");
  for (size_t k = 0; k < f->values.size(); ++k) {
    const std::string where = f->input.empty() ? "" : " (where " + f->input + " = " +
                              std::to_string(f->lo + int64_t(k)) + ")";
    std::optional<long long> i = solver::as_int64(f->values[k]);
    if (!i) throw InputError("index " + solver::to_string(f->values[k]) + where + " is not an integer");
    if (*i < -dim || *i >= dim)
      throw InputError("index " + std::to_string(*i) + where + " is out of range for axis " +
                       std::to_string(axis) + " of size " + std::to_string(dim));
    f->values[k] = Rational((long)(*i < 0 ? *i + dim : *i));
  }
  return std::move(*f);
}

Value index_equals(Context& ctx, const solver::IntegerFunction& f, int64_t j) {
  std::vector<Value> hits;
  hits.reserve(f.values.size());
  const Rational at((long)j);
  for (const Rational& i : f.values) hits.push_back(i == at ? ctx.one() : ctx.zero());
  return ctx.from_integer_function(f.input, f.lo, hits);
}

DType common_dtype(const KernelArgs& a, size_t i, size_t j) {
  DType x = input(a, i).dtype, y = input(a, j).dtype;
  if (x == DType::Undefined) return y;
  if (y == DType::Undefined || x == y) return x;
  throw InputError(input_label(a, i) + " is " + ir::dtype_name(x) + " but " + input_label(a, j) +
                   " is " + ir::dtype_name(y) + "; they must have the same type");
}

Rational truncate(const Rational& r) {
  mpz_class q;
  mpz_tdiv_q(q.get_mpz_t(), r.get_num_mpz_t(), r.get_den_mpz_t());
  return Rational(q);
}

void add_op(std::vector<OpSchema>& defs, const std::string& op_type, std::vector<int> versions,
            Kernel kernel, Traits traits) {
  for (int v : versions) defs.push_back(OpSchema{"", op_type, v, kernel, traits});
}

}  // namespace onnx_tv::ops::detail
