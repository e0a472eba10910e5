// Ops that make or convert values rather than move them: Gather, Shape, ConstantOfShape, Range,
// Identity, Cast, Constant. Kept apart from shape_ops.cpp so each file reads in one sitting.
#include <algorithm>

#include "ops/kernel_util.h"
#include "solver/boolean_residue.h"

namespace onnx_tv::ops::detail {

namespace {

// An index in range, with negative indices counted from the end.
int64_t checked_index(int64_t i, int64_t dim, int64_t axis, const std::string& where) {
  if (i < -dim || i >= dim) {
    throw InputError("index " + std::to_string(i) + where + " is out of range for axis " +
                     std::to_string(axis) + " of size " + std::to_string(dim));
  }
  return i < 0 ? i + dim : i;
}

// Gather by indices that depend on one integer input each (a token id): every output element
// is the sum over the input's values u of [id = u] times the element index(u) picks, built
// from the input's indicators (solver/indicators.cpp).
std::vector<Tensor> gather_by_integer_inputs(KernelArgs& a, const Tensor& x, const Tensor& ind,
                                             int64_t axis, Shape out) {
  Context& ctx = a.ctx;
  const int64_t dim = x.shape[axis];
  const int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis + 1, x.rank());
  std::vector<solver::IntegerFunction> fs;
  for (Value v : ind.data) fs.push_back(index_function(ctx, v, dim, axis, "indices (input #1)"));
  std::vector<Value> data;
  data.reserve(ir::element_count(out));
  std::vector<Value> picks;
  for (int64_t o = 0; o < outer; ++o)
    for (const solver::IntegerFunction& f : fs)
      for (int64_t e = 0; e < inner; ++e) {
        picks.clear();
        for (const solver::Rational& i : f.values)
          picks.push_back(x.data[size_t((o * dim + i.get_num().get_si()) * inner + e)]);
        data.push_back(ctx.from_integer_function(f.input, f.lo, picks));
      }
  return {ir::make_tensor(x.dtype, std::move(out), std::move(data))};
}

std::vector<Tensor> gather_kernel(KernelArgs& a) {
  expect_input_count(a, 2, 2);
  const Tensor& x = input(a, 0);
  const Tensor& ind = input(a, 1);
  if (x.rank() == 0) throw InputError("data must have rank >= 1");
  const int64_t axis = normalize_axis(attr_int(a.node, "axis", 0), x.rank(), "axis");
  const int64_t dim = x.shape[axis];
  const bool symbolic = std::any_of(ind.data.begin(), ind.data.end(),
                                    [&](Value v) { return !a.ctx.is_constant(v); });
  if (symbolic) {
    Shape out(x.shape.begin(), x.shape.begin() + axis);
    out.insert(out.end(), ind.shape.begin(), ind.shape.end());
    out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
    return gather_by_integer_inputs(a, x, ind, axis, std::move(out));
  }
  std::vector<int64_t> idx = const_ints(a.ctx, ind, "indices (input #1)");
  for (int64_t& i : idx) i = checked_index(i, dim, axis, "");
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  const int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis + 1, x.rank());
  std::vector<Value> data;
  data.reserve(ir::element_count(out));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : idx) {
      auto from = x.data.begin() + (o * dim + i) * inner;
      data.insert(data.end(), from, from + inner);
    }
  }
  return {ir::make_tensor(x.dtype, std::move(out), std::move(data))};
}

Tensor int64_vector(Context& ctx, const std::vector<int64_t>& v) {
  std::vector<Value> data;
  for (int64_t i : v) data.push_back(ctx.constant((long long)i));
  return ir::make_tensor(DType::Int64, {int64_t(v.size())}, std::move(data));
}

std::vector<Tensor> shape_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const Shape& s = input(a, 0).shape;
  const int64_t r = int64_t(s.size());
  auto clamp_bound = [r](int64_t b) { return std::clamp<int64_t>(b < 0 ? b + r : b, 0, r); };
  const int64_t start = clamp_bound(attr_int(a.node, "start", 0));
  const int64_t end = clamp_bound(attr_int(a.node, "end", r));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(s[d]);
  return {int64_vector(a.ctx, dims)};
}

// The element count as an int64 scalar (LayerNormalization's function body divides by it).
std::vector<Tensor> size_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const Tensor& x = input(a, 0);
  return {ir::make_tensor(DType::Int64, {}, {a.ctx.constant((long long)x.size())})};
}

std::vector<Tensor> constant_of_shape_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const std::vector<int64_t> shape = const_ints(a.ctx, input(a, 0), "shape (input #0)");
  for (int64_t d : shape) {
    if (d < 0) throw InputError("shape " + ir::shape_string(shape) + " holds a negative size");
  }
  Value v = a.ctx.zero();
  DType t = DType::Float;
  if (const ir::Attribute* at = attr(a.node, "value", ir::Attribute::Kind::Tensor)) {
    Tensor c = ir::to_tensor(a.ctx, *at->tensor);
    if (c.size() != 1) {
      throw InputError("attribute 'value' must hold one element, has shape " +
                       ir::shape_string(c.shape));
    }
    v = c.data[0];
    t = c.dtype;
  }
  Shape out(shape.begin(), shape.end());
  return {ir::make_tensor(t, out, std::vector<Value>(ir::element_count(out), v))};
}

// Range of constants: n = max(ceil((limit - start) / delta), 0) exact rationals.
std::vector<Tensor> range_kernel(KernelArgs& a) {
  expect_input_count(a, 3, 3);
  Rational r[3];
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = input(a, i);
    if (t.size() != 1) {
      throw InputError(std::string(names[i]) + " must be a scalar, has shape " +
                       ir::shape_string(t.shape));
    }
    r[i] = const_rational(a.ctx, t.data[0], names[i]);
  }
  if (r[2] == 0) throw InputError("delta is 0");
  Rational q = (r[1] - r[0]) / r[2];
  mpz_class n;
  mpz_cdiv_q(n.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  if (n < 0) n = 0;
  if (!n.fits_slong_p() || n.get_si() > (int64_t(1) << 32)) {
    throw InputError("Range of " + n.get_str() + " elements is too large");
  }
  std::vector<Value> data;
  for (long i = 0; i < n.get_si(); ++i) data.push_back(a.ctx.constant(r[0] + r[2] * i));
  const int64_t count = int64_t(data.size());  // before data is moved from
  return {ir::make_tensor(input(a, 0).dtype, {count}, std::move(data))};
}

// The reduced instance's Range along a dimension it shrinks (reduce/rewrite.cpp): its values
// as positions of the class in attribute "axis", each standing for the full program's
// position in attribute "full" (Context::position), so that nothing is proven from the two
// values per piece the instance keeps.
std::vector<Tensor> position_range_kernel(KernelArgs& a) {
  std::vector<Tensor> out = range_kernel(a);
  const std::string& axis = required_attr(a.node, "axis", ir::Attribute::Kind::String).s;
  const std::vector<int64_t>& full = required_attr(a.node, "full", ir::Attribute::Kind::Ints).ints;
  ONNX_TV_ASSERT(full.size() == out[0].data.size(), "a Range of positions without their full values");
  for (size_t i = 0; i < full.size(); ++i) {
    const Rational k = const_rational(a.ctx, out[0].data[i], "a position");
    ONNX_TV_ASSERT(k.get_den() == 1 && k.get_num().fits_slong_p(), "a position is not an integer");
    out[0].data[i] = a.ctx.position(axis, k.get_num().get_si(), full[i]);
  }
  return out;
}

std::vector<Tensor> identity_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  return {input(a, 0)};
}

// An integer constant wrapped into the range of `t`, as a two's complement cast does.
Rational wrap_integer(const Rational& r, DType t) {
  int bits = 64;
  bool is_signed = true;
  switch (t) {
    case DType::Int8: bits = 8; break;
    case DType::UInt8: bits = 8; is_signed = false; break;
    case DType::Int16: bits = 16; break;
    case DType::UInt16: bits = 16; is_signed = false; break;
    case DType::Int32: bits = 32; break;
    case DType::UInt32: bits = 32; is_signed = false; break;
    case DType::UInt64: is_signed = false; break;
    default: break;
  }
  mpz_class m = mpz_class(1) << bits, v = r.get_num() % m;  // r is an integer here
  if (v < 0) v += m;
  if (is_signed && v >= m / 2) v -= m;
  return Rational(v);
}

// Whether every value of integer type `from` is a value of `to`.
bool widens(DType from, DType to) {
  auto bits = [](DType t) {
    switch (t) {
      case DType::Int8: case DType::UInt8: return 8;
      case DType::Int16: case DType::UInt16: return 16;
      case DType::Int32: case DType::UInt32: return 32;
      default: return 64;
    }
  };
  auto is_signed = [](DType t) {
    return t != DType::UInt8 && t != DType::UInt16 && t != DType::UInt32 && t != DType::UInt64;
  };
  if (from == to) return true;
  if (is_signed(from) != is_signed(to)) return !is_signed(from) && bits(from) < bits(to);
  return bits(from) < bits(to);
}

Value cast_value(Context& ctx, Value v, DType from, DType to) {
  if (ir::is_float(to) || (ir::is_integer(to) && from == DType::Bool)) return v;
  if (to == DType::Bool) {
    if (!ctx.is_constant(v)) {
      // A value of one integer input: nonzero at each of its values or not.
      if (const auto f = ctx.as_integer_function(v)) {
        std::vector<Value> nonzero;
        for (const solver::Rational& q : f->values) nonzero.push_back(sgn(q) ? ctx.one() : ctx.zero());
        return ctx.from_integer_function(f->input, f->lo, nonzero);
      }
      // A value that is 0 or 1 on every routing the axioms allow (a routing map summed over
      // the slots of one TopK): v^2 = v there, so it is its own bool.
      if (solver::BooleanResidue(ctx).equal(ctx.mul(v, v), v)) return v;
      throw Unsupported("Cast to bool of the symbolic value " + ctx.to_string(v) +
                        " is not modeled (a comparison on a symbolic value)");
    }
    if (!v.is_finite()) return ctx.one();
    std::optional<int> sign = ctx.compare(v, ctx.zero());
    if (!sign) throw Unsupported("Cast to bool of " + ctx.to_string(v) + ": its sign is undecided");
    return *sign != 0 ? ctx.one() : ctx.zero();
  }
  if (ir::is_integer(to)) {
    if (!ctx.is_constant(v)) {
      // A value of one integer input is truncated and wrapped at each of its values (a token
      // id cast to int16 wraps past 32767); another integer value is kept only where `to`
      // holds every value of `from`.
      if (const auto f = ctx.as_integer_function(v)) {
        std::vector<Value> cast;
        for (const solver::Rational& q : f->values) cast.push_back(ctx.constant(wrap_integer(truncate(q), to)));
        return ctx.from_integer_function(f->input, f->lo, cast);
      }
      if (ir::is_integer(from) && widens(from, to)) return v;
      throw Unsupported("Cast from " + ir::dtype_name(from) + " to " + ir::dtype_name(to) +
                        " of the symbolic value " + ctx.to_string(v) + " is not modeled (it " +
                        (ir::is_integer(from) ? "may wrap)" : "rounds)"));
    }
    if (!v.is_finite()) throw MathError("Cast of an infinity to " + ir::dtype_name(to));
    return ctx.constant(wrap_integer(truncate(const_rational(ctx, v, "Cast input")), to));
  }
  throw Unsupported("Cast to " + ir::dtype_name(to) + " is not modeled");
}

std::vector<Tensor> cast_kernel(KernelArgs& a) {
  expect_input_count(a, 1, 1);
  const Tensor& x = input(a, 0);
  const DType to = DType(required_attr(a.node, "to", ir::Attribute::Kind::Int).i);
  Tensor out{to, x.shape, {}};
  out.data.reserve(x.data.size());
  for (Value v : x.data) out.data.push_back(cast_value(a.ctx, v, x.dtype, to));
  return {std::move(out)};
}

std::vector<Tensor> constant_kernel(KernelArgs& a) {
  expect_input_count(a, 0, 0);
  using K = ir::Attribute::Kind;
  const ir::Node& n = a.node;
  if (n.attributes.size() != 1) {
    throw InputError("must have exactly one attribute, has " +
                     std::to_string(n.attributes.size()));
  }
  Context& ctx = a.ctx;
  if (const ir::Attribute* at = attr(n, "value", K::Tensor)) return {ir::to_tensor(ctx, *at->tensor)};
  if (const ir::Attribute* at = attr(n, "value_float", K::Float)) {
    return {ir::make_tensor(DType::Float, {}, float_values(ctx, {at->f}))};
  }
  if (const ir::Attribute* at = attr(n, "value_floats", K::Floats)) {
    return {ir::make_tensor(DType::Float, {int64_t(at->floats.size())}, float_values(ctx, at->floats))};
  }
  if (const ir::Attribute* at = attr(n, "value_int", K::Int)) return {
    ir::make_tensor(DType::Int64, {}, {ctx.constant((long long)at->i)})};
  if (const ir::Attribute* at = attr(n, "value_ints", K::Ints)) return {int64_vector(ctx, at->ints)};
  throw Unsupported("Constant with attribute '" + n.attributes.begin()->first +
                    "' is not modeled (strings and sparse tensors are not)");
}

}  // namespace

Value wrap_result(Context& ctx, Value v, DType t, const std::string& op) {
  if (!ir::is_integer(t) || t == DType::Int64 || t == DType::UInt64 || !v.is_finite()) return v;
  if (ctx.is_constant(v)) {
    const std::optional<solver::Rational> q = ctx.as_rational(v);
    if (!q || q->get_den() != 1) return v;  // not an integer: another op's error
    return ctx.constant(wrap_integer(*q, t));
  }
  // A value of integer inputs, wrapped at each of their values.
  if (const auto f = ctx.as_integer_function(v)) {
    std::vector<Value> wrapped;
    bool same = true;
    for (const solver::Rational& q : f->values) {
      const solver::Rational w = q.get_den() == 1 ? wrap_integer(q, t) : q;
      same &= w == q;
      wrapped.push_back(ctx.constant(w));
    }
    return same ? v : ctx.from_integer_function(f->input, f->lo, wrapped);
  }
  throw Unsupported(op + " in " + ir::dtype_name(t) + " of the symbolic value " + ctx.to_string(v) +
                    " is not modeled (it may wrap around)");
}

void add_constant_ops(std::vector<OpSchema>& defs) {
  using enum Algebra;
  add_op(defs, "Gather", {1, 11, 13}, gather_kernel,
         {.rule = DimRule::Gather, .algebra = Gather, .linearity = Linearity::Joint,
          .movement = Movement::Selects, .data_inputs = 0b1, .linear_inputs = 0b1,
          .index_inputs = 0b10, .shape_arith = true});
  add_op(defs, "Shape", {1, 13, 15}, shape_kernel,
         {.rule = DimRule::Shape, .algebra = Moves, .result = ResultType::Int64, .shape_arith = true});
  add_op(defs, "Size", {1, 13}, size_kernel,
         {.rule = DimRule::Size, .algebra = Moves, .result = ResultType::Int64, .shape_arith = true});
  add_op(defs, "ConstantOfShape", {9}, constant_of_shape_kernel,
         {.rule = DimRule::ConstantOfShape, .algebra = Source, .shape_inputs = 0b1,
          .result = ResultType::ValueAttr, .shape_arith = true});
  add_op(defs, "Range", {11}, range_kernel,
         {.rule = DimRule::Range, .algebra = Source, .shape_inputs = 0b111, .same_types = 0b111,
          .shape_arith = true});
  defs.push_back(OpSchema{"onnx_tv.reduce", "Range", 1, position_range_kernel,
                          {.rule = DimRule::Range, .algebra = Source, .shape_inputs = 0b111,
                           .same_types = 0b111}});
  add_op(defs, "Identity", {1, 13, 14, 16}, identity_kernel,
         {.rule = DimRule::Broadcast, .algebra = Affine, .linearity = Linearity::Joint,
          .movement = Movement::Copies, .shape_arith = true});
  add_op(defs, "Cast", {6, 9, 13}, cast_kernel,
         {.rule = DimRule::Broadcast, .algebra = Affine, .linearity = Linearity::Joint,
          .movement = Movement::Copies, .result = ResultType::CastTo, .shape_arith = true});
  add_op(defs, "Constant", {1, 9, 11, 12, 13}, constant_kernel,
         {.rule = DimRule::Constant, .algebra = Source, .shape_arith = true});
}

}  // namespace onnx_tv::ops::detail
