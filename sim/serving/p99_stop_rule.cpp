#include "sim/serving/p99_stop_rule.hpp"

#include "sim/serving/latency_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace vramsim::serving {

const char* P99StopRule::on_finish(const Request& r, bool trace_done, std::int64_t num_created) {
  const auto sure_miss = [](Duration value, const std::optional<Duration>& target) {
    return target && LatencyHistogram::bucket_floor(value) > *target;
  };
  // The latencies exactly as ServingMetrics::on_finish records them.
  bool missed = false;
  if (sure_miss(r.first_token - r.arrival, stop_.objectives.ttft)) {
    ++num_sure_misses_[0];
    missed = true;
  }
  if (r.output_tokens > 1 &&
      sure_miss(Duration::from_nanoseconds((r.finish - r.first_token).nanoseconds() /
                                           (r.output_tokens - 1)),
                stop_.objectives.tpot)) {
    ++num_sure_misses_[1];
    missed = true;
  }
  if (sure_miss(r.finish - r.arrival, stop_.objectives.e2e)) {
    ++num_sure_misses_[2];
    missed = true;
  }
  if (!missed) return nullptr;
  std::int64_t bound = stop_.max_requests > 0 ? stop_.max_requests : -1;
  if (trace_done) bound = bound < 0 ? num_created : std::min(bound, num_created);
  if (bound < 0) return nullptr;
  if (bound != stop_bound_) {
    stop_bound_ = bound;
    stop_need_ = 1;
    for (std::int64_t n = 1; n <= bound; ++n) {
      const auto rank = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(std::ceil(P99Stop::kQuantile * static_cast<double>(n))));
      stop_need_ = std::max(stop_need_, n - rank + 1);
    }
  }
  static constexpr const char* kNames[3] = {"ttft", "tpot", "e2e"};
  for (int k = 0; k < 3; ++k) {
    if (num_sure_misses_[k] >= stop_need_) return kNames[k];
  }
  return nullptr;
}

}  // namespace vramsim::serving
