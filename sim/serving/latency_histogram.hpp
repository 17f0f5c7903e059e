// A fixed-memory histogram of non-negative durations (integer ns) that answers quantiles to a
// bounded relative error, in the manner of HdrHistogram (Gil Tene): each power of two is split
// into kSubBuckets linear sub-buckets, so a value is placed in O(1) with one count-leading-zeros
// and any quantile is off by less than 1/kSubBuckets (0.39%) of the true value. Values below
// kSubBuckets ns are exact. Memory: 64 * kSubBuckets counters (128 KiB), independent of the
// number of samples, which keeps a replay's memory proportional to requests in flight.
//
// Count, sum, min and max are exact; mean() is exact.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace vramsim::serving {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr std::int64_t kSubBuckets = std::int64_t{1} << kSubBucketBits;

  LatencyHistogram();

  void add(Duration d, std::int64_t count = 1);
  std::int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  Duration min() const { return Duration::from_nanoseconds(min_); }
  Duration max() const { return Duration::from_nanoseconds(max_); }
  /// Exact arithmetic mean (sum kept as long double); zero when empty.
  double mean_seconds() const;
  /// Nearest-rank quantile, q in [0, 1]: the smallest recorded value v such that at least
  /// ceil(q * count) samples are <= v, reported as the midpoint of v's bucket clamped to
  /// [min, max]. Zero when empty.
  Duration quantile(double q) const;

 private:
  static std::int64_t bucket_of(std::int64_t ns);
  static std::int64_t bucket_low(std::int64_t bucket);
  static std::int64_t bucket_high(std::int64_t bucket);

  std::vector<std::int64_t> counts_;
  std::int64_t count_ = 0;
  long double sum_ns_ = 0.0L;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace vramsim::serving
