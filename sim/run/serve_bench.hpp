// The serving simulator's own speed (`vramsim bench serve`):
//   (a) a synthetic workload with the Azure conversation trace's fitted length and arrival shape
//       (serving/traces/azure_conv_fit.hpp), its rate scaled up to load the replicas, on
//       replicas of Llama-3.1-8B on H100 SXM with vLLM's defaults (prefix caching off: the
//       synthetic workload shares no prefixes), replayed without an output file;
//   (b) each real trace found in a folder (Azure*.csv, vllm-bench/*.csv, *.jsonl), replayed the
//       same way on one replica, in path order.
// Measured: wall time, requests and events simulated, and the peak number of requests in flight
// (memory is proportional to it, not to the trace's length).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vramsim::run {

struct ServeBenchOptions {
  std::int64_t num_requests = 1'000'000;  // (a)'s synthetic requests
  int replicas = 4;                       // (a)'s replicas
  /// Arrival rate of (a): about half of the ~84 requests/s at which 4 H100 replicas of
  /// Llama-3.1-8B saturate on the Azure conversation lengths under the roofline model (found
  /// with this benchmark's --rate: above it the queue grows without bound).
  double rate_per_s = 40.0;
  std::uint64_t seed = 1;
  std::string traces_dir;  // (b)'s folder; empty or not a folder: (b) is skipped
};

/// One replay.
struct ServeBenchRun {
  std::string name;
  std::int64_t num_requests = 0;
  std::int64_t num_events = 0;
  std::int64_t num_steps = 0;
  std::int64_t peak_in_flight = 0;
  double simulated_s = 0.0;
  double wall_s = 0.0;
};

struct ServeBenchResult {
  std::string model_id;  // "meta-llama/Llama-3.1-8B"
  std::string gpu_id;    // "h100-sxm"
  std::vector<ServeBenchRun> runs;  // (a), then (b)'s traces
};

/// Runs (a) and (b). `root` is the source tree holding scenarios/models and topologies/.
/// Throws ConfigError if the model or the device is missing or a trace is malformed.
ServeBenchResult run_serve_bench(const ServeBenchOptions& o, const std::filesystem::path& root);

/// benchmark "serve", the model and GPU, and per run its counts, times and rates.
nlohmann::ordered_json serve_bench_json(const ServeBenchResult& r);

}  // namespace vramsim::run
