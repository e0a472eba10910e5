#pragma once
// Everything onnx-tv knows about one operator, registered once: its kernel, which dimension rule
// family shape reduction applies to it, how its values combine, and which inputs are read as
// shapes. ONNX's OpSchema is the model. Passes ask the schema (and the predicates below) instead
// of keeping their own lists of op names, so a new op is one registration and cannot drift.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "solver/context.h"

namespace onnx_tv::ops {

// How a node's output dimensions follow from its inputs'. ops/infer_shapes.h validates a node and
// computes its full-size output shapes per family; reduce/rules.cpp ties the dimensions of the
// same families for shape reduction. Both switch over every family, so a family cannot lack
// either (the compiler's -Wswitch names the missing case).
enum class DimRule {
  Unset,       // a registration that forgot its rule: the registry's test fails on it
  Broadcast,   // elementwise over numpy-broadcast inputs
  SameShape,   // one input, output of its shape, values along an axis mixed (Softmax)
  Transpose,
  MatMul,
  Gemm,
  Einsum,
  Reduce,      // Reduce* over axes (attribute or input #1)
  Reshape,
  Flatten,
  Squeeze,
  Unsqueeze,
  Concat,
  Split,
  Slice,
  Expand,
  Tile,
  ConstantOfShape,
  Range,
  Trilu,
  Gather,
  GatherElements,
  GatherND,
  ScatterElements,
  ScatterND,
  OneHot,
  TopK,
  ArgReduce,   // ArgMax, ArgMin
  CumSum,      // the input's shape, prefix sums along an axis (input #1)
  LayerNorm,
  Shape,
  Size,
  Constant,
};

// How output values are made of input values, for passes that follow sums and counts.
enum class Algebra {
  Unset,        // a registration that forgot its algebra: the registry's test fails on it
  Sum,          // adds its operands (Add, Sum)
  Difference,   // Sub
  Affine,       // a fixed linear map of each element, or a mean of operands (Neg, Cast, Mean)
  Product,
  Quotient,
  Power,
  Select,       // Where
  Function,     // a non-polynomial function of its operands (Exp, Max, comparisons, Softmax)
  SumReduction, // sums along axes (ReduceSum, ReduceMean)
  Reduction,    // other polynomial reductions along axes (ReduceSumSquare)
  Contraction,  // MatMul, Gemm, Einsum
  Moves,        // moves, repeats or zeroes elements, or reads only the shape
  Gather,
  Scatter,      // data with elements replaced or combined at indexed positions (ScatterND)
  Norm,         // LayerNormalization
  Source,       // values made from attributes and shapes (Constant, ConstantOfShape, Range)
};

// Whether each output element is an input element unchanged.
enum class Movement {
  None,
  Copies,   // every element, reordered or reshaped (Reshape, Transpose, Identity, Cast)
  Selects,  // some elements (Slice, Split, Gather)
};

// Whether a partial value (one addend of a sum held across ranks) stays a partial through it.
enum class Linearity {
  None,
  Joint,      // linear in all its data inputs together (Add, Concat, Reshape)
  EachAlone,  // linear in a data input when the others are constants (Mul; Div in input #0)
};

// The element type of output #0.
enum class ResultType { Input0, Input1, Input2, Bool, Int64, CastTo, ValueAttr };

// Registered in this order with designated initializers, so each registration reads as a row.
struct Traits {
  DimRule rule;
  Algebra algebra;
  Linearity linearity = Linearity::None;
  Movement movement = Movement::None;
  uint32_t shape_inputs = 0;   // bit k: input k is read as a shape, axes, sizes or positions
  uint32_t data_inputs = ~0u;  // bit k: input k is data (what Broadcast broadcasts)
  uint32_t linear_inputs = ~0u;  // bit k: input k is one the op is linear in
  uint32_t same_types = 0;     // bits of the inputs that must share one element type
  // bit k: input k holds indices, read as positions along an axis of another input (Gather's
  // indices, OneHot's): their values are compared with that axis's positions.
  uint32_t index_inputs = 0;
  ResultType result = ResultType::Input0;
  bool shape_arith = false;    // exact and cheap on small integer tensors (torch's shape code)
  // Its value changes form at thresholds of its operands (comparisons, Max, Relu): no affine
  // map of positions preserves what it reads from them.
  bool piecewise = false;
};

// What a kernel sees. Omitted optional inputs are nullptr. The node was validated by its
// schema's infer_shapes before the kernel runs, so the kernel may rely on input count, ranks,
// axes and attribute kinds; it reports values it cannot model with Unsupported and lets
// MathError through; the caller adds the node and file to the message.
struct KernelArgs {
  solver::Context& ctx;
  const ir::Node& node;
  std::span<const ir::Tensor* const> inputs;
};

using Kernel = std::function<std::vector<ir::Tensor>(KernelArgs&)>;

struct OpSchema {
  std::string domain;  // "" for the default domain
  std::string op_type;
  int since_version;
  Kernel kernel;
  Traits traits;

  bool is_shape_input(size_t k) const { return k < 32 && (traits.shape_inputs >> k) & 1u; }
  bool is_data_input(size_t k) const { return k >= 32 || (traits.data_inputs >> k) & 1u; }
  bool is_linear_input(size_t k) const { return k < 32 && (traits.linear_inputs >> k) & 1u; }
  bool is_index_input(size_t k) const { return k < 32 && (traits.index_inputs >> k) & 1u; }
  bool has_rule(DimRule r) const { return traits.rule == r; }
  // Adds its operands with signs (Add, Sub, Sum).
  bool adds() const { return traits.algebra == Algebra::Sum || traits.algebra == Algebra::Difference; }
  // Normalises its values along an axis (Softmax, LogSoftmax).
  bool normalizes() const { return traits.rule == DimRule::SameShape && traits.algebra == Algebra::Function; }
};

// What validation knows of one input at full size: its shape and type, and its integer values
// when it is a small constant (axes, a Reshape target, Range bounds). `ints` is set for the
// schema's shape inputs whenever the caller knows them.
struct InputInfo {
  ir::Shape shape;
  ir::DType dtype = ir::DType::Undefined;
  std::optional<std::vector<int64_t>> ints;
};

// One output as validation computes it; shape nullopt when it depends on values not known
// (a Reshape target computed from data).
struct OutputInfo {
  std::optional<ir::Shape> shape;
  ir::DType dtype = ir::DType::Undefined;
};

}  // namespace onnx_tv::ops
