#pragma once
// Single tensors in files: a serialized TensorProto (.pb), as ONNX's backend test data stores
// the inputs and expected outputs of each test case, and as `onnx-tv eval --out` writes them.
#include <string>

#include "ir/graph.h"

namespace onnx_tv::frontend {

struct NamedTensor {
  std::string name;  // the TensorProto's name; may be empty
  ir::ConstTensor tensor;
};

// Reads one TensorProto. InputError naming the file when it is missing or not a tensor;
// Unsupported for element types onnx-tv does not model (strings). Sequences, maps and
// optionals stored in the same .pb form are not tensors and are reported as Unsupported.
NamedTensor load_tensor_file(const std::string& path);

// Writes `t` as a TensorProto named `name` in its own element type (float values are rounded
// to that type). InputError when the file cannot be written.
void save_tensor_file(const std::string& path, const std::string& name, const ir::ConstTensor& t);

}  // namespace onnx_tv::frontend
