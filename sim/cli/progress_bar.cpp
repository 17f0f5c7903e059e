#include "sim/cli/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vramsim::cli {

bool progress_forced() {
  const char* v = std::getenv("VRAMSIM_PROGRESS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

bool progress_wanted() { return progress_forced() || ::isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::string noun)
    : noun_(std::move(noun)), enabled_(progress_wanted()) {}

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (done == 0) start_ = std::chrono::steady_clock::now();
  if (!enabled_ || done == 0) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (done < total && t - last_draw_s_ < 0.1) return;
  last_draw_s_ = t;
  const double rate = t > 0.0 ? static_cast<double>(done) / t : 0.0;
  const double left = rate > 0.0 ? static_cast<double>(total - done) / rate : 0.0;
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total == 0 ? kWidth : kWidth * done / total;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %s, %.3g/s, %.0fs left  ",
               std::string(filled, '#').c_str(), std::string(kWidth - filled, '-').c_str(), done,
               total, noun_.c_str(), rate, left);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

ProgressLine::ProgressLine(std::string label, double delay_s)
    : label_(std::move(label)),
      delay_s_(delay_s),
      enabled_(progress_wanted()),
      forced_(progress_forced()) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!forced_ && (t < delay_s_ || t - last_draw_s_ < 0.1)) return;
  last_draw_s_ = t;
  // A terminal line is redrawn in place; forced output (a log) gets one line per update.
  std::fprintf(stderr, forced_ ? "%s: %s\n" : "\r%s: %s   ", label_.c_str(), text.c_str());
  std::fflush(stderr);
  drawn_ = !forced_;
}

void ProgressLine::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
  std::fflush(stderr);
}

}  // namespace vramsim::cli
