// Progress on stderr. ProgressBar, for searches of known size: "[#####-----] 120/812 plans,
// 310/s, 2s left", redrawn at most ten times a second and ended with a newline when the last
// item is done; the clock starts when the work does (update with done == 0). ProgressLine, for
// work of unknown length (a trace replay, a bisection): a status line drawn once the work has
// taken long enough to be worth it. Both are off when stderr is not a terminal, so piped or
// redirected output holds no control characters, unless VRAMSIM_PROGRESS=1 asks for them
// (CI logs, tests); then ProgressLine draws from the start, one line per update.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

namespace vramsim::cli {

class ProgressBar {
 public:
  /// `noun`: what is counted ("plans", "points").
  explicit ProgressBar(std::string noun);
  /// A bar drawn whatever stderr is (tests).
  ProgressBar(std::string noun, bool enabled) : noun_(std::move(noun)), enabled_(enabled) {}
  void update(std::size_t done, std::size_t total);

 private:
  std::string noun_;
  bool enabled_;
  double last_draw_s_ = -1.0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// Whether progress is drawn: stderr is a terminal, or VRAMSIM_PROGRESS=1.
bool progress_wanted();
/// VRAMSIM_PROGRESS=1: drawn although stderr is not a terminal.
bool progress_forced();

class ProgressLine {
 public:
  /// `label` starts every line ("serve"); nothing is drawn before `delay_s` of work.
  explicit ProgressLine(std::string label, double delay_s = 2.0);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();
  /// Redraws the line with `text` (at most ten times a second).
  void show(const std::string& text);
  /// Ends the line (a newline) if anything was drawn; later show() calls start a new one.
  void finish();

 private:
  std::string label_;
  double delay_s_;
  bool enabled_;
  bool forced_;
  bool drawn_ = false;
  double last_draw_s_ = -1.0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace vramsim::cli
