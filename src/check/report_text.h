#pragma once
// The human-readable report of `onnx-tv check`, as the CLI prints it and the Python package's
// Result.text holds it.
#include <ostream>
#include <string>

#include "check/result.h"

namespace onnx_tv::check {

void print_report(std::ostream& out, const CheckResult& r);
// The one-line summary that ends every run.
std::string summary_line(const CheckResult& r);

}  // namespace onnx_tv::check
