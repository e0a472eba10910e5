#pragma once
// What every harness shares: the entry points libFuzzer calls (and replay_main.cpp calls
// without libFuzzer, for the crashers kept as regression tests), and the rule that decides what
// a crash is.
#include <cstddef>
#include <cstdint>
#include <functional>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace onnx_tv::fuzz {

// Runs `f`. An InputError or Unsupported (exit codes 2 and 3) is a proper answer to a bad
// input; any other exception (an InternalError, std::bad_alloc, std::out_of_range, ...) is a
// bug, reported on stderr and ended with abort() so that the fuzzer keeps the input.
void expect_clean(const std::function<void()>& f);

// Ends the process as a crash the fuzzer keeps, after printing `what`.
[[noreturn]] void crash(const char* what);

}  // namespace onnx_tv::fuzz
