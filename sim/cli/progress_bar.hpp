// A progress line for long searches on stderr: "[#####-----] 120/812 plans, 310/s, 2s left",
// redrawn at most ten times a second and ended with a newline when the last item is done. The
// clock starts when the work does (update with done == 0). Off when stderr is not a terminal,
// so piped or redirected output holds no control characters.
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

}  // namespace vramsim::cli
