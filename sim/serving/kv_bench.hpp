// A micro-benchmark of KvCacheManager: a synthetic continuous-batching loop (prefill once,
// then one decode token per step, free at the end, recompute preemption when the pool runs
// dry) that measures how many manager calls per second the simulator can afford. Exposed by
// the CLI as `vramsim bench`; not a test.
#pragma once

#include <cstdint>

#include "sim/serving/kv_cache_manager.hpp"

namespace vramsim::serving {

struct KvBenchOptions {
  std::int64_t num_requests = 100'000;
  std::int64_t prompt_tokens = 1200;  // mean; each request draws uniformly in [mean/2, 3*mean/2]
  std::int64_t output_tokens = 210;   // mean; drawn the same way (at least 1)
  std::int64_t block_size = 16;
  std::int64_t max_running = 256;     // requests decoding together
  /// GPU blocks; 0: enough for max_running requests of mean length (recompute preemptions
  /// happen only if many long requests meet).
  std::int64_t num_blocks = 0;
  bool enable_prefix_caching = false;
  std::int64_t shared_prefix_blocks = 0;  // leading blocks every prompt shares (cache hits)
  std::uint64_t seed = 1;
};

struct KvBenchResult {
  std::int64_t num_ops = 0;  // allocate_slots, free and prefix-lookup calls
  std::int64_t num_requests_finished = 0;
  std::int64_t num_preemptions = 0;
  double seconds = 0.0;      // wall-clock time of the loop
  double ops_per_second = 0.0;
  KvCacheStats stats;
};

/// Runs the synthetic decode-heavy pattern of `options` and times it (steady clock).
KvBenchResult run_kv_bench(const KvBenchOptions& options);

}  // namespace vramsim::serving
