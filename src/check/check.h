#pragma once
// The library entry: onnx_tv::check::run proves a plan equivalent to its spec, or shows where
// it is not. It never throws for the user's mistakes: they come back as an InputError verdict.
#include <string>

#include "check/result.h"

namespace onnx_tv::check {

CheckResult run(const std::string& spec_path, const std::string& shards_dir,
                const CheckOptions& options = {});

// The memory a check may take, in bytes: --max-memory, else a share of the machine's.
size_t memory_limit_bytes(const CheckOptions& options);

}  // namespace onnx_tv::check
