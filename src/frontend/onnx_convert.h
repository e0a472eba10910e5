#pragma once
// Private to the frontend: conversions from libonnx's protobuf classes to the ir. Kept apart
// from the public headers so that nothing outside the frontend sees protobuf.
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace onnx_tv::frontend::detail {

// The most elements a shape read from a file may hold, declared or stored: 2^48, more than any
// real tensor (a 2^48-element tensor of 2-byte floats is 512 TiB). Bounding it keeps every
// product of sizes, element sizes and counts that follows far below 2^63.
constexpr int64_t kMaxElements = int64_t(1) << 48;

// The number of elements of `dims` (each 0 or more), or nullopt when it passes kMaxElements.
// A zero dimension makes the count 0 whatever the others are.
std::optional<int64_t> bounded_element_count(const std::vector<int64_t>& dims);

// Where a tensor comes from, for messages and for external data.
struct TensorSource {
  std::string file;      // the model file, as named in messages
  std::string base_dir;  // where external data locations are resolved ("" : current dir)
  std::string what;      // "initializer 'w'" or "attribute 'value' of Constant node 'c'"
};

// The values of a dense tensor: floats exactly as stored, integers and bools as ints.
// InputError (naming source.file and source.what) on string tensors, unknown element types,
// a wrong number of stored values, and external data that cannot be read.
ir::ConstTensor convert_tensor(const onnx::TensorProto& t, const TensorSource& source);

// A sparse tensor made dense (absent elements are zero).
ir::ConstTensor convert_sparse_tensor(const onnx::SparseTensorProto& t,
                                      const TensorSource& source);

// Replaces every call of a model-local function (ModelProto.functions, as the dynamo exporter
// writes one per module) by the function's body, so the rest of onnx-tv sees plain ops.
// Values inside a body are renamed apart per call; attribute references take the caller's
// attribute. InputError naming `file` on calls that recurse or do not match the signature.
void inline_local_functions(onnx::ModelProto& model, const std::string& file);

// Exact values of the 16-bit float formats, decoded from their bit patterns.
double half_to_double(uint16_t bits);
double bfloat16_to_double(uint16_t bits);

}  // namespace onnx_tv::frontend::detail
