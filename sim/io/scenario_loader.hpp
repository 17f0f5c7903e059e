// Scenario files (TOML) for the serving side: which model, which GPU, and vLLM's engine
// arguments. Every key is optional here; the command line overrides any of them, and what is
// still unset takes vLLM's default. Each value keeps the file:line it came from, so a value that
// fails validation later is reported where the user wrote it.
//
//   [model]
//   id = "meta-llama/Llama-3.1-8B-Instruct"   # a zoo id or a path to a config.json
//   [hardware]
//   gpu = "h100-sxm"
//   [engine]                                   # vLLM's flag names, snake_case
//   tp = 1
//   max_model_len = 32768
//   gpu_memory_utilization = 0.9
//   [workload]                                 # `vramsim serve` only
//   trace = "path/to/trace.csv"                # or synthetic = "azure-conv" | "poisson" | ...
//   num_requests = 1000
//   [serving]
//   replicas = 2
//   scheduler = "vllm"
//   [slo]
//   ttft = "2s"
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace vramsim::io {

template <class T>
struct Located {
  T value;
  std::string field;     // "engine.max_model_len"
  SourceLocation where;  // file:line of the value
};

struct ServingScenario {
  std::string file;  // as given on the command line
  std::string text;  // the whole file, stored in results files
  std::optional<Located<std::string>> model;
  std::optional<Located<std::string>> gpu;
  std::optional<Located<std::string>> calibration;  // hardware.calibration: a profile path
  std::optional<Located<std::int64_t>> tp;
  std::optional<Located<std::int64_t>> pp;
  std::optional<Located<std::string>> dtype;
  std::optional<Located<std::string>> kv_cache_dtype;
  std::optional<Located<std::string>> quantization;
  std::optional<Located<std::int64_t>> max_model_len;
  std::optional<Located<std::int64_t>> max_num_seqs;
  std::optional<Located<std::int64_t>> max_num_batched_tokens;
  std::optional<Located<double>> gpu_memory_utilization;
  std::optional<Located<std::int64_t>> block_size;
  std::optional<Located<std::int64_t>> num_gpu_blocks;
  std::optional<Located<bool>> enforce_eager;
  std::optional<Located<std::int64_t>> seed;

  // [workload]: where requests come from (serve).
  std::optional<Located<std::string>> trace;         // a trace file
  std::optional<Located<std::string>> trace_format;  // auto, azure, mooncake, csv
  std::optional<Located<std::string>> on_malformed;  // error, skip
  std::optional<Located<std::string>> synthetic;     // azure-conv, poisson, gamma, burst
  std::optional<Located<double>> rate;               // requests per second
  std::optional<Located<double>> cv;                 // gamma inter-arrival CV
  std::optional<Located<std::string>> prompt_tokens; // length distribution syntax
  std::optional<Located<std::string>> output_tokens;
  std::optional<Located<std::int64_t>> num_requests;
  std::optional<Located<Duration>> duration;
  std::optional<Located<std::int64_t>> prefix_groups;
  std::optional<Located<std::int64_t>> prefix_tokens;
  std::optional<Located<double>> time_scale;
  std::optional<Located<Duration>> window_start;
  std::optional<Located<Duration>> window_end;
  std::optional<Located<std::int64_t>> max_requests;
  std::optional<Located<std::int64_t>> max_prompt_tokens;
  std::optional<Located<std::int64_t>> max_output_tokens;
  std::optional<Located<std::int64_t>> max_total_tokens;

  // [serving]: replicas and policies (serve).
  std::optional<Located<std::int64_t>> replicas;
  std::optional<Located<std::string>> scheduler;
  std::optional<Located<std::string>> router;
  std::optional<Located<std::string>> preemption;  // recompute, swap
  std::optional<Located<std::int64_t>> chunk_size;
  std::optional<Located<Bytes>> swap_space;        // host memory per replica for swapping
  std::optional<Located<bool>> enable_prefix_caching;
  std::optional<Located<bool>> enable_chunked_prefill;
  std::optional<Located<Duration>> timeseries_interval;

  // [slo]: objectives for goodput (serve).
  std::optional<Located<Duration>> slo_ttft;
  std::optional<Located<Duration>> slo_tpot;
  std::optional<Located<Duration>> slo_e2e;
};

/// Reads a scenario file. Throws ConfigError listing every problem (syntax, wrong types,
/// unknown keys with "did you mean").
ServingScenario load_serving_scenario(const std::filesystem::path& file);

/// Reads a scenario given as text; `name` stands for the file in messages and in `file` (a
/// relative workload.trace is taken relative to its folder). Throws like load_serving_scenario.
ServingScenario load_serving_scenario_from_string(std::string_view text, std::string name);

/// Every field a serving scenario may set, as dotted paths ("engine.tp"), sorted; tables
/// themselves ("engine") are not listed.
std::vector<std::string> serving_scenario_fields();

}  // namespace vramsim::io
