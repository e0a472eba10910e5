#pragma once
// ONNX files in, ir::Graph out. IR version 7 and later are read; a newer IR version than
// libonnx knows is read too, and only what is really unsupported fails.
#include <string>

#include "ir/graph.h"

namespace onnx_tv::frontend {

struct LoadOptions {
  // Runs ONNX shape inference first so that value_info also holds the shapes it can infer
  // (Recv outputs, intermediate values). Inference failures are ignored: the file's own
  // declarations are kept as they are.
  bool infer_shapes = false;
  // The oldest IR version read. Plans need 7 (plan-format section 1); `onnx-tv eval` and the
  // conformance runner read ONNX's own test models, some of which are IR version 3.
  int64_t min_ir_version = 7;
};

// Reads and converts a model. InputError naming the file on anything unreadable or malformed
// (missing file, not a ModelProto, IR version < 7, external data that is not there, an
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
