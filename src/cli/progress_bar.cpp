#include "cli/progress_bar.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace onnx_tv::cli {

namespace {

// "42s", "3m05s", "1h02m": short enough for one line.
std::string duration(double s) {
  const long t = std::lround(s);
  char buf[32];
  if (t < 60) std::snprintf(buf, sizeof buf, "%lds", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return buf;
}

// Rates and estimates from the first fraction of a second are noise: wait for this much.
constexpr double kSettleSeconds = 1.0;

}  // namespace

std::string progress_line(const check::Progress& p, double seconds) {
  const int width = 30;
  const int filled = p.total > 0 ? int(width * p.done / p.total) : 0;
  std::string bar(size_t(filled), '#');
  bar.resize(width, '.');
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-8s [%s] %lld/%lld", p.phase.c_str(), bar.c_str(),
                (long long)p.done, (long long)p.total);
  std::string line = buf;
  if (seconds >= kSettleSeconds && p.done > 0 && p.done < p.total) {
    const double rate = double(p.done) / seconds;
    // Slow units (instances of a grid, each tens of seconds) by their time each: a rate under
    // one a second reads "0/s".
    const std::string pace =
        rate >= 1 ? std::to_string(std::lround(rate)) + "/s" : duration(1 / rate) + " each";
    std::snprintf(buf, sizeof buf, "  %s  ~%s left", pace.c_str(),
                  duration(double(p.total - p.done) / rate).c_str());
    line += buf;
  }
  return line;
}

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(const check::Progress& p) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (p.phase != phase_) {
    phase_ = p.phase;
    phase_start_ = now;
  }
  // Redraw at most 10 times a second, and always at the end of a phase.
  if (drawn_ && p.done != p.total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const std::string line =
      progress_line(p, std::chrono::duration<double>(now - phase_start_).count());
  // Pad over the tail of a longer previous line.
  std::fprintf(stderr, "\r%-*s", int(std::max(width_, line.size())), line.c_str());
  std::fflush(stderr);
  width_ = line.size();
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%*s\r", int(width_), "");
  std::fflush(stderr);
  drawn_ = false;
  width_ = 0;
}

}  // namespace onnx_tv::cli
