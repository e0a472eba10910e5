#pragma once
// What one process proved, as bytes: how processes proving one check together
// (CheckOptions::spread) hand each other their instances' outcomes. Every field of a result
// travels, names from input files byte for byte (CBOR strings are not re-encoded), so each
// process decides exactly as one process that proved every instance would.
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "check/result.h"
#include "reduce/kept_whole.h"

namespace onnx_tv::check {

// One instance of the grid of fewer ranks and micro-batches, proven.
struct InstanceOutcome {
  size_t instance = 0;
  bool again = false;         // it asked to choose the ranks again, keeping `kept`
  CheckResult result;
  reduce::KeptWhole kept;
  std::string error_kind;     // the error it raised ("" for none): see error_outcome
  std::string error_message;
  bool operator==(const InstanceOutcome&) const = default;
};

std::string encode_outcomes(const std::vector<InstanceOutcome>& outcomes);
// InternalError on bytes encode_outcomes did not write.
std::vector<InstanceOutcome> decode_outcomes(const std::string& bytes);

std::string encode_result(const CheckResult& r);
CheckResult decode_result(const std::string& bytes);

// An error as kind and message, and back as the same exception type (InputError, MathError,
// Unsupported, ResourceLimit, NotApplicable, InternalError, Error).
void describe_error(std::exception_ptr e, std::string& kind, std::string& message);
std::exception_ptr error_from(const std::string& kind, const std::string& message);

}  // namespace onnx_tv::check
