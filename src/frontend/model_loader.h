#pragma once
// ONNX files in, ir::Graph out. IR version 7 and later are read; a newer IR version than
// libonnx knows is read too, and only what is really unsupported fails.
#include <string>

#include "ir/graph.h"

namespace onnx_tv::frontend {

// Reads and converts a model. InputError naming the file on anything unreadable or malformed
// (missing file, not a ModelProto, IR version < 7, external data that is not there, an
// initializer of an unsupported type). Older default-domain opsets are read where the op
// registry has their semantics.
ir::Graph load_model(const std::string& path);

// The same, from bytes already in memory; `name` is used in messages.
ir::Graph parse_model(const std::string& bytes, const std::string& name);

}  // namespace onnx_tv::frontend
