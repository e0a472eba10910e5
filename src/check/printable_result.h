#pragma once
// A result made safe to print and to write as JSON, by the CLI and the Python package alike.
#include "check/result.h"

namespace onnx_tv::check {

// Passes every string of `r` through printable() (common/printable.h): names of nodes and
// values come from the files and may be any bytes, which a JSON writer rejects and a terminal
// obeys. Error messages are printable already (common/errors.h); the rest of the report is
// made so here, before it is printed or written.
void make_printable(CheckResult& r);

}  // namespace onnx_tv::check
