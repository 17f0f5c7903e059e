// The option schema of serving: one row per setting of `budget` and `serve` (and of `compare
// serve`, `capacity serve` and serve sweeps): the model, the GPU and vLLM's engine arguments, the
// workload, the serving policies and the objectives. The machinery is option_schema.hpp; the
// rows are in serve_options.cpp. Adding a setting is one row there, a member of ServeOptions,
// and the code that uses it.
//
//   [model]
//   id = "meta-llama/Llama-3.1-8B-Instruct"   # a zoo id or a path to a config.json
//   [hardware]
//   gpu = "h100-sxm"
//   [engine]                                   # vLLM's flag names, snake_case
//   tp = 1
//   max_model_len = 32768
//   [workload]                                 # `vramsim serve` only
//   trace = "path/to/trace.csv"                # or synthetic = "azure-conv" | "poisson" | ...
//   [serving]
//   replicas = 2
//   [slo]
//   ttft = "2s"
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/option_schema.hpp"
#include "sim/run/serve_run.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/trace_file.hpp"

namespace vramsim::run {

/// Every serving setting, typed and resolved, with where each value came from. Defaults are the
/// members' initial values (vLLM's where vLLM has the setting), written once.
struct ServeOptions : ResolvedOrigins {
  // The engine: what `budget` reads.
  std::string model;        // model.id
  std::string revision = BudgetRequest{}.revision;  // model.revision
  std::string gpu;          // hardware.gpu
  std::string calibration;  // hardware.calibration: a profile path; "" for datasheet defaults
  std::string topology;     // hardware.topology: node id, node file or cluster file; "": default
  std::int64_t tp = BudgetRequest{}.tp;
  std::int64_t pp = BudgetRequest{}.pp;
  std::string dtype = BudgetRequest{}.dtype;
  std::string kv_cache_dtype = BudgetRequest{}.kv_cache_dtype;
  std::string quantization = BudgetRequest{}.quantization;
  std::int64_t max_model_len = 0;           // 0: the model's limit
  std::int64_t max_num_seqs = 0;            // 0: vLLM's default for the GPU
  std::int64_t max_num_batched_tokens = 0;  // 0: vLLM's default for the GPU
  std::string vllm_version = BudgetRequest{}.vllm_version;
  std::int64_t long_prefill_token_threshold = 0;  // 0: off
  double gpu_memory_utilization = BudgetRequest{}.gpu_memory_utilization;
  std::int64_t block_size = BudgetRequest{}.block_size;
  std::int64_t num_gpu_blocks = 0;  // 0: computed by the budget
  std::int64_t kv_cache_memory_bytes = 0;  // per device; 0: sized by vLLM's memory profile
  bool enforce_eager = false;
  /// vLLM's --async-scheduling / --no-async-scheduling; unset: that release's default
  /// (async_scheduling_default in serve_options.cpp).
  std::optional<bool> async_scheduling;
  Bytes kv_offloading_size = BudgetRequest{}.kv_offloading_size;  // 0: no offload tier
  std::string kv_offloading_backend = BudgetRequest{}.kv_offloading_backend;
  std::string lmcache_config;  // LMCache's YAML (BudgetRequest::lmcache_config); "" for none
  /// KV disk tier (LMCache's local_disk): size per replica, 0: none; the disk's read and write
  /// bandwidth as written ("7GB/s"), required with it, "" when not given.
  Bytes kv_offloading_disk_size = BudgetRequest{}.kv_offloading_disk_size;
  std::string kv_offloading_disk_read_bandwidth;
  std::string kv_offloading_disk_write_bandwidth;
  std::string speculative_config;    // vLLM's JSON; "" for none
  std::string spec_acceptance_rate;  // "0.7" or "0.8,0.6,0.5"; needed with speculative_config
  double cpu_offload_gb = 0.0;       // GiB per device
  bool enable_lora = false;          // vLLM's LoRAConfig (BudgetRequest)
  std::int64_t max_loras = BudgetRequest{}.max_loras;
  std::int64_t max_lora_rank = BudgetRequest{}.max_lora_rank;
  std::int64_t max_cpu_loras = BudgetRequest{}.max_cpu_loras;  // 0: max_loras
  std::string lora_dtype = BudgetRequest{}.lora_dtype;
  bool fully_sharded_loras = false;
  std::int64_t data_parallel_size = BudgetRequest{}.data_parallel_size;
  bool enable_expert_parallel = false;
  std::string all2all_backend = BudgetRequest{}.all2all_backend;
  double expert_load_imbalance = BudgetRequest{}.expert_load_imbalance;
  std::int64_t seed = 0;

  // The workload.
  std::string trace;  // a trace file; "" for a synthetic workload
  serving::TraceFormat trace_format = serving::TraceSpec{}.format;
  serving::MalformedRowPolicy on_malformed = serving::TraceSpec{}.malformed_rows;
  std::string synthetic = "azure-conv";
  std::optional<double> rate;  // requests per second; unset: the synthetic workload's own
  std::optional<double> cv;    // gamma arrivals; unset: the synthetic workload's own
  std::string prompt_tokens;   // a length distribution ("fixed:512"); "" for the workload's own
  std::string output_tokens;
  std::int64_t num_requests = 1000;
  std::optional<Duration> duration;
  std::int64_t prefix_groups = 0;
  std::int64_t prefix_tokens = 0;
  std::int64_t num_lora_adapters = 0;      // synthetic requests' adapters; 0: the base model
  std::string lora_distribution = "uniform";  // "uniform" or "zipf:S"
  double time_scale = 1.0;
  std::optional<Duration> window_start;
  std::optional<Duration> window_end;
  std::optional<std::int64_t> max_requests;
  std::optional<std::int64_t> max_prompt_tokens;
  std::optional<std::int64_t> max_output_tokens;
  std::optional<std::int64_t> max_total_tokens;
  std::optional<std::int64_t> max_concurrency;  // unset: open loop
  Duration think_time = Duration::zero();
  bool trace_arrivals = false;  // with max_concurrency and a trace: keep its arrival times

  // Serving.
  std::int64_t replicas = 1;
  std::string scheduler = "vllm";
  std::string router = "round-robin";
  serving::PreemptionMode preemption = serving::SchedulerLimits{}.preemption;
  std::int64_t chunk_size = serving::SchedulerLimits{}.chunk_size;
  Bytes swap_space = GiB(4);  // vLLM's --swap-space default (GiB per GPU)
  bool enable_prefix_caching = true;   // vLLM V1's default
  bool enable_chunked_prefill = true;  // vLLM V1's default
  Duration timeseries_interval = Duration::zero();
  std::int64_t max_requests_in_system = serving::kDefaultMaxRequestsInSystem;
  // Disaggregated prefill/decode (serving::Disaggregation); prefill_instances 0: aggregated.
  std::int64_t prefill_instances = 0;
  std::int64_t decode_instances = 0;
  std::int64_t prefill_tp = 0;  // 0: tp
  std::int64_t decode_tp = 0;   // 0: tp
  std::int64_t prefill_max_num_seqs = 0;            // 0: max_num_seqs
  std::int64_t decode_max_num_seqs = 0;             // 0: max_num_seqs
  std::int64_t prefill_max_num_batched_tokens = 0;  // 0: max_num_batched_tokens
  std::int64_t decode_max_num_batched_tokens = 0;   // 0: max_num_batched_tokens
  std::string prefill_gpu;  // "": gpu
  std::string decode_gpu;   // "": gpu

  // Objectives.
  std::optional<Duration> slo_ttft;
  std::optional<Duration> slo_tpot;
  std::optional<Duration> slo_e2e;
};

using ServeOptionRow = OptionRow<ServeOptions>;

/// The synthetic workloads --synthetic takes: "azure-conv (...), poisson, ...".
std::string_view synthetic_names();

/// The schema, in scenario order. The rows `budget` reads have no group: the engine's, and
/// serving.enable_chunked_prefill (off, the profile run holds max_model_len tokens); the others
/// are grouped "Workload", "Serving", "Objectives (goodput)".
std::span<const ServeOptionRow> serve_option_rows();
/// The row of a scenario path or a flag; nullptr when none.
const ServeOptionRow* find_serve_option(std::string_view path_or_flag);

/// A serving scenario's values, read with the schema. Relative paths are taken relative to the
/// file's folder (`base_dir` for text). Throws ConfigError with every problem at its file:line,
/// unknown keys with "did you mean".
ScenarioValues load_serve_scenario(const std::filesystem::path& file);
ScenarioValues load_serve_scenario_text(std::string_view text, std::string name,
                                        const std::filesystem::path& base_dir = {});

/// The one merge (flags over the scenario over the defaults), each value validated by its row;
/// `model.id` and `hardware.gpu` are required. Throws ConfigError with every problem at its
/// origin (file:line for scenario values; the path otherwise).
ServeOptions resolve_serve_options(const ScenarioValues& scenario, const GivenValues& flags = {});

/// The budget request of the engine settings.
BudgetRequest budget_request(const ServeOptions& o);
/// answer_budget() of the options, its problems at their origins.
BudgetAnswer answer_budget(const ServeOptions& o, const BudgetRequest& req);

/// The whole serving configuration: the engine, the workload (a trace file or a synthetic
/// stream), the policies and the objectives. Throws ConfigError with every problem on its
/// scenario path, at its origin.
ServeConfig serve_config(const ServeOptions& o);

/// prepare_serve() of the options, its problems at their origins.
ServeAnswer prepare_serve(const ServeOptions& o);

/// `report` with every problem on a serving path located at its origin.
ValidationReport located(const ServeOptions& o, const ValidationReport& report);

/// The fields a sweep grid may set in serving scenarios (every row), and those holding paths.
io::ScenarioFields serving_scenario_fields();

/// The resolved inputs, one entry per row (option_schema.hpp), stored in results; the engine's
/// rows only (those `budget` reads).
nlohmann::ordered_json resolved_inputs_json(const ServeOptions& o);
nlohmann::ordered_json resolved_engine_inputs_json(const ServeOptions& o);

}  // namespace vramsim::run
