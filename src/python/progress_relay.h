#pragma once
// Progress of a check, relayed to Python while the check runs with the GIL released: the
// caller's callback sees each step, and Ctrl-C (or an exception the callback raises) stops the
// check at the next step instead of after it, however long it would have run.
#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <exception>

#include "check/result.h"

namespace onnx_tv::python {

// Thrown through the check to stop it. Not a std::exception, so that no phase takes it for
// an error of its own (check::run lets everything but onnx_tv's errors pass).
struct Stopped {};

class ProgressRelay {
 public:
  // `callback`: None, or called as callback(phase, done, total) with the GIL held.
  explicit ProgressRelay(pybind11::object callback) : callback_(std::move(callback)) {}

  // CheckOptions::on_progress; called with the GIL released, on any thread, one at a time.
  void operator()(const check::Progress& p);

  // The Python exception that stopped the check (KeyboardInterrupt, or the callback's own).
  std::exception_ptr error() const { return error_; }

 private:
  pybind11::object callback_;
  std::exception_ptr error_;
  std::atomic<bool> stopped_{false};
  std::chrono::steady_clock::time_point last_signal_check_{};
};

}  // namespace onnx_tv::python
