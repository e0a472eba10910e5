#pragma once
// What the CLI writes must never fail on what the input files hold, and a run that ends in an
// internal error still leaves its --json report behind.
#include <string>

#include "check/result.h"

namespace onnx_tv::cli {

// Passes every string of `r` through printable() (common/printable.h): names of nodes and
// values come from the files and may be any bytes, which a JSON writer rejects and a terminal
// obeys. Error messages are printable already (common/errors.h); the rest of the report is
// made so here, before it is printed or written.
void make_printable(check::CheckResult& r);

// The --json report of a check that stopped on an internal error (exit code 4): the format of
// docs/json-report.md with verdict "INTERNAL ERROR" and `message` saying what failed.
std::string internal_error_json(const std::string& message, const std::string& spec_path,
                                const std::string& shards_dir);

}  // namespace onnx_tv::cli
