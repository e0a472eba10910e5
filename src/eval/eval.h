#pragma once
// Concrete evaluation of an ONNX model through the prover's own semantics: the graph runs in a
// solver Context on constant inputs (check/executor's run_graph, the same op kernels), and each
// output element is then evaluated by solver::Evaluator, exactly where it is a rational and in
// long double where a non-polynomial function (exp, log, erf, sin...) occurs. So `onnx-tv eval`
// and the conformance runner test the code that proves, not a second interpreter.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::eval {

// A computed output: its element type and shape, and each element as a number. `exact` tells
// which elements are the exact rational (ints and bools always are).
struct NumericTensor {
  std::string name;
  ir::DType dtype = ir::DType::Undefined;
  ir::Shape shape;
  std::vector<long double> values;
  std::vector<bool> exact;
};

// Inputs bound to a model: by the tensor's name when it names a graph input, otherwise by
// position among the graph inputs that have no initializer (ONNX test data's convention).
struct InputTensor {
  std::string name;
  ir::ConstTensor tensor;
};

// Runs `g` on `inputs` and evaluates every graph output. InputError when an input is missing,
// unknown or of the wrong type, or when a value is undefined over the reals (MathError: NaN
// inputs, division by zero...); Unsupported naming the op for what onnx-tv does not model.
std::vector<NumericTensor> evaluate(const ir::Graph& g, const std::vector<InputTensor>& inputs);

// The first node whose op has no kernel at its opset, as "op 'X' (domain 'd', opset n)";
// empty when every node's op is modeled. Lets callers say UNKNOWN before running anything.
std::string first_unsupported_op(const ir::Graph& g);

// ONNX's test data stores bfloat16 tensors as uint16 bit patterns (numpy has no bfloat16).
// Where a bfloat16 is expected and a uint16 tensor is given, this reads the bits as bfloat16;
// any other tensor is returned as it is.
ir::ConstTensor as_bfloat16_if_bits(const ir::ConstTensor& t, ir::DType expected);

// Back to a storable tensor (values rounded to double; ints rounded to the nearest integer).
ir::ConstTensor to_const(const NumericTensor& t);

// Reads a model the way eval does: every IR version from 3 on.
ir::Graph load_eval_model(const std::string& path);

// Reads input_0.pb, input_1.pb, ... (or output_*.pb with prefix "output_") from `dir`, in
// numeric order. InputError when `dir` is missing.
std::vector<InputTensor> load_tensor_dir(const std::string& dir, const std::string& prefix);

}  // namespace onnx_tv::eval
