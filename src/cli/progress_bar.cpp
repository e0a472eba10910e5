#include "cli/progress_bar.h"

#include <cstdio>

namespace onnx_tv::cli {

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(const Progress& p) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  // Redraw at most 10 times a second, and always at the end of a phase.
  if (drawn_ && p.done != p.total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const int width = 30;
  int filled = p.total > 0 ? int(width * p.done / p.total) : 0;
  std::string bar(filled, '#');
  bar.resize(width, '.');
  std::fprintf(stderr, "\r%-8s [%s] %lld/%lld", p.phase.c_str(), bar.c_str(),
               (long long)p.done, (long long)p.total);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%60s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace onnx_tv::cli
