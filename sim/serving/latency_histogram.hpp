// A fixed-memory histogram of non-negative durations (integer ns) that answers quantiles to a
// bounded relative error, in the manner of HdrHistogram (Gil Tene): each power of two is split
// into kSubBuckets linear sub-buckets, so a value is placed in O(1) with one count-leading-zeros
// and any quantile is off by less than 1/kSubBuckets (0.39%) of the true value. Values below
// kSubBuckets ns are exact. Memory: 64 * kSubBuckets counters (128 KiB), independent of the
// number of samples, which keeps a replay's memory proportional to requests in flight.
//
// Count, sum, min and max are exact; mean() is exact.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

namespace vramsim::serving {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr std::int64_t kSubBuckets = std::int64_t{1} << kSubBucketBits;

  LatencyHistogram();

  void add(Duration d, std::int64_t count = 1) {
    const std::int64_t ns = d.nanoseconds();
    VRAMSIM_CHECK(ns >= 0, "negative latency {} ns", ns);
    counts_[static_cast<std::size_t>(bucket_of(ns))] += count;
    if (count_ == 0 || ns < min_) min_ = ns;
    if (count_ == 0 || ns > max_) max_ = ns;
    count_ += count;
    sum_ns_ += static_cast<long double>(ns) * static_cast<long double>(count);
  }
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
  /// The lowest value of the bucket `d` falls in: every value of that bucket, its midpoint
  /// included, is >= this (what P99Stop needs to know a quantile is above a target).
  static Duration bucket_floor(Duration d) {
    return Duration::from_nanoseconds(bucket_low(bucket_of(d.nanoseconds())));
  }

 private:
  static std::int64_t bucket_of(std::int64_t ns) {
    const auto v = static_cast<std::uint64_t>(ns);
    if (v < static_cast<std::uint64_t>(kSubBuckets)) return ns;
    const int shift = 64 - std::countl_zero(v) - kSubBucketBits;  // keep the top bits
    const auto top = static_cast<std::int64_t>(v >> shift);       // in [S/2, S)
    return static_cast<std::int64_t>(shift) * (kSubBuckets / 2) + top;
  }
  static std::int64_t bucket_low(std::int64_t bucket);
  static std::int64_t bucket_high(std::int64_t bucket);

  std::vector<std::int64_t> counts_;
  std::int64_t count_ = 0;
  long double sum_ns_ = 0.0L;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace vramsim::serving
