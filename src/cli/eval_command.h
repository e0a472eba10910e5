#pragma once
// `onnx-tv eval` and `onnx-tv conformance`: the prover's op semantics on concrete values.
#include <string>
#include <vector>

namespace onnx_tv::cli {

// eval MODEL.onnx --inputs DIR [--expected DIR] [--out DIR]
int run_eval(const std::vector<std::string>& args);

// conformance [DATA_DIR] [--table FILE.md]
int run_conformance(const std::vector<std::string>& args);

}  // namespace onnx_tv::cli
