#pragma once
// Three kinds of failure, kept apart because users act on them differently:
//  - InputError: the user's files are wrong (exit 2). The message names file, node, value.
//    MathError: a value undefined over the reals (log of -1, 0 * inf), an input error.
//  - Unsupported: a well-formed input outside what onnx-tv decides (exit 3, UNKNOWN).
//    ResourceLimit: a limit the user set was reached. NotApplicable: a shortcut declines.
//  - InternalError: a bug in onnx-tv itself; raised by ONNX_TV_ASSERT with its context.
// These are the only exception types: every phase catches by these kinds.
// Errors gain context as they propagate (as in ONNX's Status): a kernel says what is wrong
// with a value, the evaluator adds the node, the loader adds the file.
// Messages quote names from input files, which may be any bytes: the message and every context
// added pass through printable() (common/printable.h), so what() is always valid UTF-8 that
// can be printed and written to JSON.
#include <stdexcept>
#include <string>
#include <vector>

namespace onnx_tv {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what);
  // Prepends "context: " to the message, innermost context last.
  void add_context(const std::string& context);
  // Appends "; hint: <hint>": what the user can likely do about it, once the message says
  // what is wrong and where.
  void add_hint(const std::string& hint);
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

class InputError : public Error {
 public:
  using Error::Error;
};

// An operation whose result is undefined over the reals (log of -1, 0 * inf).
class MathError : public InputError {
 public:
  using InputError::InputError;
};

class Unsupported : public Error {
 public:
  using Error::Error;
};

// A comparison of positions that a reduced instance leaves undecided (solver/positions.cpp):
// UNKNOWN like Unsupported, and a reason for the check to run again at full size.
class UndecidedPositions : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

// A limit the user set (--max-memory, --max-elements) was reached: UNKNOWN like Unsupported,
// but never a reason for a phase to fall back to another way of checking (which would only
// need more).
class ResourceLimit : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

// A shortcut does not apply here: shape reduction to this plan, the stage-wise proof past its
// size limit. The phase that tried it turns it into a value (reduce::Outcome::why, an UNKNOWN
// staged attempt) and goes on another way, exact as well; it never reaches the CLI.
class NotApplicable : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

class InternalError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void assertion_failed(const char* cond, const char* file, int line,
                                   const std::string& context);

}  // namespace onnx_tv

#define ONNX_TV_ASSERT(cond, context)                                           \
  do {                                                                          \
    if (!(cond)) ::onnx_tv::assertion_failed(#cond, __FILE__, __LINE__, (context)); \
  } while (0)
