#pragma once
// A one-line progress bar on a terminal; silent when stderr is not a terminal (CI logs).
#include <chrono>
#include <string>

#include "check/result.h"

namespace onnx_tv::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void update(const Progress& p);
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace onnx_tv::cli
