#pragma once
// The human-readable report of `onnx-tv check`.
#include <ostream>
#include <string>

#include "check/result.h"

namespace onnx_tv::cli {

void print_report(std::ostream& out, const check::CheckResult& r);
// The one-line summary that ends every run.
std::string summary_line(const check::CheckResult& r);

}  // namespace onnx_tv::cli
