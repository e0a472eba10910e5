#pragma once
// A one-line progress bar on a terminal; silent when stderr is not a terminal (CI logs).
#include <chrono>
#include <string>

#include "check/result.h"

namespace onnx_tv::cli {

// The bar's text for `p`, `seconds` after its phase began: the phase, a bar, done/total, and
// once the phase has run a while, its rate and the estimated time left
// ("plan     [#######.......] 812/3740  406/s  ~7s left").
std::string progress_line(const check::Progress& p, double seconds);

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void update(const check::Progress& p);
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  size_t width_ = 0;  // of the last line drawn, to blank it
  std::string phase_;
  std::chrono::steady_clock::time_point last_, phase_start_;
};

}  // namespace onnx_tv::cli
