#pragma once
// The machine-readable report of `--json FILE`: the same verdict and facts as the text report.
#include <string>

#include "check/result.h"

namespace onnx_tv::check {

std::string to_json(const CheckResult& result, const std::string& spec_path,
                    const std::string& shards_dir);

}  // namespace onnx_tv::check
