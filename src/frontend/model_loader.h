#pragma once
// ONNX files in, ir::Graph out. IR version 3 and later are read (ONNX's own backend test
// models are IR 3 to 6; before 3 a model imports no opsets, so its ops have no version); a
// newer IR version than libonnx knows is read too, and only what is really unsupported fails.
// The opsets a model imports decide what each op means (ops/registry.h): an op whose version
// for that opset onnx-tv does not model is UNKNOWN, never read with another version's meaning.
#include <string>

#include "ir/graph.h"

namespace onnx_tv::frontend {

struct LoadOptions {
  // Runs ONNX shape inference first so that value_info also holds the shapes it can infer
  // (Recv outputs, intermediate values). Inference failures are ignored: the file's own
  // declarations are kept as they are.
  bool infer_shapes = false;
  // The oldest IR version read.
  int64_t min_ir_version = 3;
  // Resident memory, in bytes, past which loading stops with ResourceLimit (0: no limit).
  size_t memory_bytes = 0;
};

// Reads and converts a model. InputError naming the file on anything unreadable or malformed
// (missing file, not a ModelProto, IR version < 3, external data that is not there, an
// initializer of an unsupported type). Older default-domain opsets are read where the op
// registry has their semantics.
ir::Graph load_model(const std::string& path);
ir::Graph load_model(const std::string& path, const LoadOptions& options);

// The same, from bytes already in memory; `name` is used in messages, and external data is
// looked up in the folder `name` lies in.
ir::Graph parse_model(const std::string& bytes, const std::string& name);
ir::Graph parse_model(const std::string& bytes, const std::string& name,
                      const LoadOptions& options);

}  // namespace onnx_tv::frontend
