// `vramsim bench plan-serve`: the speed of `vramsim plan serve`'s search. Llama-3.1-8B-Instruct
// serving the first `num_requests` requests of a trace (default: the Azure conversation trace,
// 10,000 requests, at its own arrival times) under compare serve's default SLOs (p99 TTFT 2 s,
// TPOT 100 ms), over 1,000 configurations: 5 GPUs (h100-sxm, a100-sxm-80g, l40s, l4, h200) x
// TP 1, 2, 4, 8 x replicas 1, 2, 3, 4, 8 x quantization none, fp8 x max_num_batched_tokens
// 1024, 2048, 4096, 8192, 16384 (KV dtype auto), on `jobs` threads. The search phase (every
// configuration sized and replayed once) and the capacity phase (capacity and why of the
// reported configurations) are timed apart.
#pragma once

#include <cstdint>
#include <filesystem>

namespace vramsim::run {

struct PlanServeBenchResult {
  int jobs = 0;
  std::int64_t num_requests = 0;
  std::int64_t num_configs = 0;
  std::int64_t num_simulated = 0;
  std::int64_t num_meet = 0;           // a checksum
  std::int64_t num_stopped_early = 0;  // misses whose replay ended early
  double search_wall_s = 0.0;          // the search without the capacity phase
  double search_no_early_stop_wall_s = 0.0;  // the same with early stop off (0: not run)
  std::int64_t num_reported = 0;       // configurations given a capacity and why
  double capacity_wall_s = 0.0;        // the capacity phase alone (0: not run)
  double cheapest_usd_per_hour = 0.0;  // a checksum
};

/// Runs the benchmark on `trace` (a file); `compare_no_early_stop` also times the search with
/// early stop off, `capacity` the capacity phase. Throws ConfigError if the trace, the zoo or
/// the device sheets are missing.
PlanServeBenchResult run_plan_serve_bench(int jobs, const std::filesystem::path& trace,
                                          std::int64_t num_requests, bool compare_no_early_stop,
                                          bool capacity);

}  // namespace vramsim::run
