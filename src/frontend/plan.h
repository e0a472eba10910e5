#pragma once
// Reading a shards folder (plan-format sections 2 to 4) into an ir::Plan.
#include <cstddef>
#include <string>

#include "ir/plan.h"

namespace onnx_tv::frontend {

// Reads the folder: plan.json if present (unknown keys are errors), else rank<N>.onnx files;
// models; metadata bindings (key "onnx_tv.bindings"); duplicates are errors. ResourceLimit
// past `memory_bytes` of resident memory (0: no limit).
ir::Plan load_plan(const std::string& shards_dir, size_t memory_bytes = 0);

}  // namespace onnx_tv::frontend
