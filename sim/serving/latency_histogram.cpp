#include "sim/serving/latency_histogram.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace vramsim::serving {

// Bucket layout (S = kSubBuckets, H = S/2): values [0, S) map to buckets [0, S) one to one. A
// larger value whose highest set bit is e keeps its top kSubBucketBits bits, top = v >> shift
// with shift = e - kSubBucketBits + 1, top in [H, S), and lands in bucket shift * H + top;
// bucket b >= S therefore covers [top << shift, ((top + 1) << shift) - 1] with
// shift = b / H - 1 and top = b % H + H.
LatencyHistogram::LatencyHistogram()
    : counts_(static_cast<std::size_t>((64 - kSubBucketBits + 2) * (kSubBuckets / 2)), 0) {}

std::int64_t LatencyHistogram::bucket_low(std::int64_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  const std::int64_t shift = bucket / (kSubBuckets / 2) - 1;
  const std::int64_t top = bucket % (kSubBuckets / 2) + kSubBuckets / 2;
  return top << shift;
}

std::int64_t LatencyHistogram::bucket_high(std::int64_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  const std::int64_t shift = bucket / (kSubBuckets / 2) - 1;
  return bucket_low(bucket) + (std::int64_t{1} << shift) - 1;
}

double LatencyHistogram::mean_seconds() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(sum_ns_ / static_cast<long double>(count_)) * 1e-9;
}

Duration LatencyHistogram::quantile(double q) const {
  VRAMSIM_CHECK(q >= 0.0 && q <= 1.0, "quantile {} outside [0, 1]", q);
  if (count_ == 0) return Duration::zero();
  const auto rank = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_))));
  std::int64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const auto bucket = static_cast<std::int64_t>(b);
      const std::int64_t mid = bucket_low(bucket) + (bucket_high(bucket) - bucket_low(bucket)) / 2;
      return Duration::from_nanoseconds(std::clamp(mid, min_, max_));
    }
  }
  return Duration::from_nanoseconds(max_);
}

}  // namespace vramsim::serving
