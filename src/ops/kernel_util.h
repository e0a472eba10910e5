#pragma once
// Private to src/ops: what every kernel family needs. Input access and attribute getters that
// fail with a message naming the input or attribute, reading of constant integer inputs
// (Reshape targets, axes, indices), axis normalization, broadcasting and index arithmetic.
// The node itself is named by run_node, which prefixes every message with Node::describe.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "ops/schema.h"

namespace onnx_tv::ops::detail {

using ir::DType;
using ir::Shape;
using ir::Tensor;
using solver::Context;
using solver::Rational;
using solver::Value;

// Registration, one function per family file; registry.cpp calls them all once.
// v as an integer op computing in `t` leaves it: wrapped into t's range (uint8 200 + 100 is
// 44) for int8 to uint32, on constants and on values of integer inputs, value by value;
// Unsupported for another symbolic value, which might wrap. int64 and uint64 are left as
// they are: their indices and counts stay far below 2^63.
Value wrap_result(Context& ctx, Value v, DType t, const std::string& op);

void add_elementwise_ops(std::vector<OpSchema>& defs);
void add_matmul_ops(std::vector<OpSchema>& defs);
void add_reduce_ops(std::vector<OpSchema>& defs);
void add_shape_ops(std::vector<OpSchema>& defs);
void add_constant_ops(std::vector<OpSchema>& defs);
void add_nn_ops(std::vector<OpSchema>& defs);
void add_logic_ops(std::vector<OpSchema>& defs);
void add_index_ops(std::vector<OpSchema>& defs);
void add_select_ops(std::vector<OpSchema>& defs);

// ---- inputs ----

// "input #1 ('B')": how messages name an input.
std::string input_label(const KernelArgs& a, size_t i);
// The i-th input; InputError naming it when the node omits it.
const Tensor& input(const KernelArgs& a, size_t i);
// The i-th input or nullptr when omitted or beyond the node's inputs.
const Tensor* optional_input(const KernelArgs& a, size_t i);
// InputError unless the node has between min and max inputs.
void expect_input_count(const KernelArgs& a, size_t min, size_t max);

// Every element of t as an int64; t must be constant and integral (shapes, axes, indices...).
std::vector<int64_t> const_ints(Context& ctx, const Tensor& t, const std::string& what);
// The single element of a scalar (or one-element) constant integer tensor.
int64_t const_int_scalar(Context& ctx, const Tensor& t, const std::string& what);
// The exact rational of a constant element; Unsupported when it is symbolic or infinite.
Rational const_rational(Context& ctx, Value v, const std::string& what);

// ---- attributes ----

// The attribute `name` if present, after checking its kind; InputError on a kind mismatch.
const ir::Attribute* attr(const ir::Node& n, const std::string& name, ir::Attribute::Kind kind);
int64_t attr_int(const ir::Node& n, const std::string& name, int64_t def);
std::optional<int64_t> attr_int_opt(const ir::Node& n, const std::string& name);
std::optional<std::vector<int64_t>> attr_ints_opt(const ir::Node& n, const std::string& name);
std::string attr_string(const ir::Node& n, const std::string& name, const std::string& def);
// A float attribute with its plan-format meaning (float attributes are float32); `def` is the
// spec's default, itself a float32 literal.
Value attr_float(Context& ctx, const ir::Node& n, const std::string& name, float def);
// InputError when a required attribute is absent.
const ir::Attribute& required_attr(const ir::Node& n, const std::string& name,
                                   ir::Attribute::Kind kind);

// ---- axes ----

// axis in [-rank, rank) mapped to [0, rank); InputError naming `what` otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// The same for a list; duplicates are an InputError.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const std::string& what);

// ---- broadcasting ----

// The numpy (multidirectional) broadcast of the shapes; InputError naming them otherwise.
Shape broadcast_shapes(std::span<const Shape> shapes, const std::string& what);
// For each element of `out` in row-major order, the row-major element of `in` it reads when
// `in` is broadcast to `out` (`in` must broadcast to `out`).
std::vector<int64_t> broadcast_map(const Shape& in, const Shape& out);
// InputError naming `what` unless a tensor of shape `in` broadcasts to `out` (unidirectionally).
void check_broadcasts_to(const Shape& in, const Shape& out, const std::string& what);
// `t` broadcast to `out` (a copy of the values); InputError naming `what` when it does not.
Tensor broadcast_to(const Tensor& t, const Shape& out, const std::string& what);

// ---- shapes and indices ----

// Advances a row-major multi-index; false after the last one.
bool next_index(std::vector<int64_t>& idx, const Shape& shape);
int64_t product(const Shape& s, size_t begin, size_t end);
// (outer, n, inner): the sizes before, along and after `axis`, for kernels that reduce or
// normalize along one axis: element (o, i, k) sits at (o * n + i) * inner + k.
struct AxisSplit {
  int64_t outer, n, inner;
};
AxisSplit split_at(const Shape& s, int64_t axis);

// The dtype shared by inputs i and j (Undefined counts as compatible); InputError otherwise.
DType common_dtype(const KernelArgs& a, size_t i, size_t j);

// An index element as a function of at most one integer input (solver::IntegerFunction), each
// of its values checked against `dim` and mapped into [0, dim) (negative ones count from the
// end). `what` names the indices in messages ("indices (input #1)"), `axis` the axis indexed.
// InputError for a value out of range or not an integer, naming the input value that gives it;
// Unsupported for an element that is neither a constant nor such a function.
solver::IntegerFunction index_function(Context& ctx, Value v, int64_t dim, int64_t axis,
                                       const std::string& what);
// The 0/1 value [f = j] of an index function f, built from its input's indicators.
Value index_equals(Context& ctx, const solver::IntegerFunction& f, int64_t j);

// r rounded toward zero, as integer division and float-to-int casts do.
Rational truncate(const Rational& r);

// Registers `kernel` with its traits under each since-version in `versions` (ONNX revisions that
// did not change the semantics onnx-tv models still get their entry, so the conformance table
// is complete).
void add_op(std::vector<OpSchema>& defs, const std::string& op_type, std::vector<int> versions,
            Kernel kernel, Traits traits);

// The floats of a Float-kind attribute list / scalar turned into Values (float32 meaning).
std::vector<Value> float_values(Context& ctx, const std::vector<double>& fs);

}  // namespace onnx_tv::ops::detail
