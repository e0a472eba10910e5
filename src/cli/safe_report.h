#pragma once
// A run that ends in an internal error still leaves its --json report behind. (The result of
// a check is made printable by check::make_printable, check/printable_result.h.)
#include <string>

namespace onnx_tv::cli {

// The --json report of a check that stopped on an internal error (exit code 4): the format of
// docs/json-report.md with verdict "INTERNAL ERROR" and `message` saying what failed.
std::string internal_error_json(const std::string& message, const std::string& spec_path,
                                const std::string& shards_dir);

}  // namespace onnx_tv::cli
