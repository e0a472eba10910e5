#include "python/progress_relay.h"

namespace onnx_tv::python {

namespace py = pybind11;

namespace {

// Without a callback the GIL is taken only this often, to look for Ctrl-C: steps of a large
// check come by the thousand per second.
constexpr auto kSignalCheckEvery = std::chrono::milliseconds(100);

}  // namespace

void ProgressRelay::operator()(const check::Progress& p) {
  if (stopped_) throw Stopped{};
  const auto now = std::chrono::steady_clock::now();
  if (callback_.is_none() && now - last_signal_check_ < kSignalCheckEvery) return;
  last_signal_check_ = now;
  py::gil_scoped_acquire gil;
  try {
    // Python runs signal handlers only on its main thread; elsewhere this returns 0.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callback_.is_none()) callback_(p.phase, p.done, p.total);
  } catch (const py::error_already_set&) {
    error_ = std::current_exception();
    stopped_ = true;
    throw Stopped{};
  }
}

}  // namespace onnx_tv::python
