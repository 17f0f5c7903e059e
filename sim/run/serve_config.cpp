// ServeOptions -> what runs: the workload (trace or synthetic, checked against the settings that
// only synthetic workloads take), the budget request, and the serving configuration of
// `serve` / `compare` / `capacity` / `plan serve` (aggregated replicas or disaggregated pools),
// each problem located at the setting's origin. The schema rows themselves are
// serve_options.cpp.
#include "sim/run/serve_options.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>
#include <tuple>

#include "sim/core/error.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/vllm_version.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/lmcache_config.hpp"
#include "sim/serving/speculative.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"
#include "sim/serving/traces/length_distribution.hpp"

namespace vramsim::run {

namespace {

/// TraceSpec::validate's keys ("workload.<key>") that are not the schema's path.
std::string workload_path(const std::string& field) {
  if (field == "workload.path") return "workload.trace";
  if (field == "workload.prompt_lengths") return "workload.prompt_tokens";
  if (field == "workload.output_lengths") return "workload.output_tokens";
  return field;
}

/// The settings only a synthetic workload reads.
constexpr std::string_view kSyntheticOnly[] = {
    "workload.rate",          "workload.cv",            "workload.num_requests",
    "workload.duration",      "workload.prompt_tokens", "workload.output_tokens",
    "workload.prefix_groups", "workload.prefix_tokens"};

std::string origin_words(const ServeOptions& o, std::string_view path) {
  const Origin at = o.origin(path);
  switch (at.kind) {
    case OriginKind::kFlag: return at.flag;
    case OriginKind::kScenario:
      return fmt::format("{} ({}:{})", path, at.where.file, at.where.line);
    case OriginKind::kDefault: break;
  }
  return std::string(path);
}

/// Refuses the settings a workload would silently ignore: synthetic settings beside a trace,
/// --cv without gamma arrivals, --rate with burst arrivals, one half of a shared prefix without
/// the other, --trace-arrivals without a trace or without --max-concurrency.
void refuse_ignored(const ServeOptions& o, bool replays_trace, ValidationReport& report) {
  using serving::ArrivalProcess;
  if (o.trace_arrivals && (!replays_trace || !o.max_concurrency)) {
    report.error("workload.trace_arrivals",
                 "keeps a trace's arrival times under closed-loop clients: it needs "
                 "workload.trace (--trace) and workload.max_concurrency (--max-concurrency); "
                 "without them arrivals are the workload's own already");
  }
  if (replays_trace) {
    for (std::string_view path : kSyntheticOnly) {
      if (!o.given(path)) continue;
      report.error(std::string(path),
                   fmt::format("a synthetic-workload setting, ignored while {} replays a trace; "
                               "leave it out, or give --synthetic to replace the scenario's "
                               "trace",
                               origin_words(o, "workload.trace")));
    }
    return;
  }
  const auto process = o.synthetic == "azure-conv"
                           ? std::optional<ArrivalProcess>(ArrivalProcess::kGamma)
                           : serving::arrival_process_from_string(o.synthetic);
  if (process && *process != ArrivalProcess::kGamma && o.given("workload.cv")) {
    report.error("workload.cv",
                 fmt::format("the coefficient of variation of gamma arrivals, ignored by '{}' "
                             "arrivals (workload.synthetic); use --synthetic gamma",
                             o.synthetic));
  }
  if (process && *process == ArrivalProcess::kBurst && o.given("workload.rate")) {
    report.error("workload.rate", "ignored by 'burst' arrivals (every request at time zero)");
  }
  if (o.given("workload.prefix_tokens") != o.given("workload.prefix_groups")) {
    const bool tokens = o.given("workload.prefix_tokens");
    report.error(tokens ? "workload.prefix_tokens" : "workload.prefix_groups",
                 fmt::format("a shared prefix needs both workload.prefix_groups "
                             "(--prefix-groups) and workload.prefix_tokens (--prefix-tokens); "
                             "{} alone is ignored",
                             origin_words(o, tokens ? "workload.prefix_tokens"
                                                    : "workload.prefix_groups")));
  }
}

serving::TraceSpec workload_spec(const ServeOptions& o, ValidationReport& report) {
  using namespace serving;
  TraceSpec spec;
  // A --synthetic flag replaces a scenario's trace, as its help says ("without --trace").
  const bool synthetic_flag_over_scenario_trace =
      o.origin("workload.synthetic").kind == OriginKind::kFlag &&
      o.origin("workload.trace").kind == OriginKind::kScenario;
  const bool replays_trace = !o.trace.empty() && !synthetic_flag_over_scenario_trace;
  if (replays_trace && o.origin("workload.synthetic").kind == OriginKind::kFlag) {
    report.error("workload.synthetic",
                 "a synthetic workload and --trace together: give one of them");
  } else if (replays_trace && o.given("workload.synthetic")) {
    report.error("workload.synthetic",
                 fmt::format("a synthetic workload beside {}: give one of them",
                             origin_words(o, "workload.trace")));
  }
  refuse_ignored(o, replays_trace, report);
  if (replays_trace) {
    spec.kind = TraceKind::kFile;
    spec.path = o.trace;
    spec.format = o.trace_format;
  } else {
    const auto seed = static_cast<std::uint64_t>(o.seed);
    if (o.synthetic == "azure-conv") {
      spec = azure_conv_synthetic(o.num_requests, seed);
    } else if (const auto process = arrival_process_from_string(o.synthetic)) {
      spec.kind = TraceKind::kSynthetic;
      spec.synthetic.arrivals.process = *process;
      spec.synthetic.num_requests = o.num_requests;
      spec.synthetic.seed = seed;
    } else {
      report.error("workload.synthetic",
                   fmt::format("unknown workload '{}'; valid: {}", o.synthetic, synthetic_names()));
    }
    SyntheticSpec& s = spec.synthetic;
    if (o.rate) s.arrivals.rate_per_s = *o.rate;
    if (o.cv) s.arrivals.cv = *o.cv;
    s.duration = o.duration;
    if (s.duration && !o.given("workload.num_requests")) {
      s.num_requests.reset();  // a duration alone ends the stream
    }
    const auto lengths = [&](const std::string& path, const std::string& text,
                             LengthDistribution& out) {
      if (text.empty()) return;
      try {
        out = parse_length_distribution(text, path);
      } catch (const ConfigError& e) {
        for (const Problem& p : e.report().problems()) report.error(path, p.message);
      }
    };
    lengths("workload.prompt_tokens", o.prompt_tokens, s.prompt);
    lengths("workload.output_tokens", o.output_tokens, s.output);
    s.shared_prefix.num_groups = o.prefix_groups;
    s.shared_prefix.prefix_tokens = o.prefix_tokens;
  }
  spec.malformed_rows = o.on_malformed;
  TraceTransforms& t = spec.transforms;
  t.time_scale = o.time_scale;
  t.window_start = o.window_start;
  t.window_end = o.window_end;
  t.max_requests = o.max_requests;
  t.max_prompt_tokens = o.max_prompt_tokens;
  t.max_output_tokens = o.max_output_tokens;
  t.max_total_tokens = o.max_total_tokens;
  spec.lora.num_adapters = o.num_lora_adapters;
  spec.lora.seed = static_cast<std::uint64_t>(o.seed);
  spec.lora.parse_distribution(o.lora_distribution, report, "workload.lora_distribution");
  if (o.num_lora_adapters > 0 && !o.enable_lora) {
    report.error("workload.num_lora_adapters",
                 "requests name adapters but LoRA is off: give --enable-lora (engine.enable_lora)");
  }
  ValidationReport checked;
  spec.validate(checked, "workload");
  for (const Problem& p : checked.problems()) report.error(workload_path(p.field), p.message, p.where);
  return spec;
}

/// Closed-loop clients send requests of given lengths (vllm bench serve's --random-input-len /
/// --random-output-len, a dataset's): a trace, the azure-conv fit, or --prompt-tokens and
/// --output-tokens. A bare arrival process (poisson, gamma, burst) carries no lengths of its
/// own (its defaults are placeholders), so a closed loop over it without both is refused,
/// naming the missing setting.
void refuse_closed_loop_without_lengths(const ServeOptions& o, const serving::TraceSpec& spec,
                                        ValidationReport& report) {
  if (spec.kind == serving::TraceKind::kFile || o.synthetic == "azure-conv") return;
  for (const char* path : {"workload.prompt_tokens", "workload.output_tokens"}) {
    if (o.given(path)) continue;
    const bool prompt = std::string_view(path) == "workload.prompt_tokens";
    report.error(path,
                 fmt::format("closed-loop clients (workload.max_concurrency, "
                             "--max-concurrency) need the {} lengths of their requests, and "
                             "'{}' arrivals carry none: give {} (e.g. fixed:{}, as vllm bench "
                             "serve's --random-{}-len), a trace (--trace), or --synthetic "
                             "azure-conv",
                             prompt ? "prompt" : "output", o.synthetic,
                             prompt ? "--prompt-tokens" : "--output-tokens",
                             prompt ? "1024" : "128", prompt ? "input" : "output"));
  }
}

/// Runs `f`, its ConfigError's problems located at their origins.
template <class F>
auto at_origins(const ServeOptions& o, F&& f) {
  try {
    return f();
  } catch (const ConfigError& e) {
    throw ConfigError(located(o, e.report()));
  }
}

}  // namespace

BudgetRequest budget_request(const ServeOptions& o) {
  BudgetRequest req;
  req.model_id = o.model;
  req.revision = o.revision;
  req.gpu_id = o.gpu;
  // The node the engine's GPUs sit in: its fabric decides NCCL's NVLS buffers (non-torch
  // memory, hence the KV blocks) as budget --topology decides them (answer_budget), and its
  // host memory holds the KV offload tier.
  req.topology = o.topology;
  req.calibration = o.calibration;
  req.tp = o.tp;
  req.pp = o.pp;
  req.dtype = o.dtype;
  req.kv_cache_dtype = o.kv_cache_dtype;
  req.quantization = o.quantization;
  req.max_model_len = o.max_model_len;
  req.max_num_seqs = o.max_num_seqs;
  req.max_num_batched_tokens = o.max_num_batched_tokens;
  req.gpu_memory_utilization = o.gpu_memory_utilization;
  req.block_size = o.block_size;
  req.num_gpu_blocks = o.num_gpu_blocks;
  req.kv_cache_memory_bytes = o.kv_cache_memory_bytes;
  req.enforce_eager = o.enforce_eager;
  req.vllm_version = o.vllm_version;
  req.enable_chunked_prefill = o.enable_chunked_prefill;
  req.chunked_prefill_given = o.given("serving.enable_chunked_prefill");
  // serve and the commands built on it run a V0 release's scheduler with a KV cache sized by
  // the oldest modelled V1 release's start-up rules (noted); budget refuses it.
  req.v0_kv_from_v1_rules = true;
  req.kv_offloading_size = o.kv_offloading_size;
  req.kv_offloading_backend = o.kv_offloading_backend;
  req.lmcache_config = o.lmcache_config;
  req.kv_offloading_disk_size = o.kv_offloading_disk_size;
  req.speculative_config = o.speculative_config;
  req.spec_acceptance_rate = o.spec_acceptance_rate;
  req.cpu_offload_gb = o.cpu_offload_gb;
  req.enable_lora = o.enable_lora;
  req.max_loras = o.max_loras;
  req.max_lora_rank = o.max_lora_rank;
  req.max_cpu_loras = o.max_cpu_loras;
  req.lora_dtype = o.lora_dtype;
  req.fully_sharded_loras = o.fully_sharded_loras;
  req.data_parallel_size = o.data_parallel_size;
  req.enable_expert_parallel = o.enable_expert_parallel;
  req.all2all_backend = o.all2all_backend;
  req.expert_load_imbalance = o.expert_load_imbalance;
  req.seed = o.seed;
  return req;
}

BudgetAnswer answer_budget(const ServeOptions& o, const BudgetRequest& req) {
  return at_origins(o, [&] { return answer_budget(req, checked_project_root()); });
}

namespace {

// The disaggregated settings (serving.prefill_* / decode_*) into `c`: the decode pool's engine
// in c.engine and its instances in setup.num_replicas, the prefill pool's in c.disaggregated.
void disaggregate(const ServeOptions& o, ServeConfig& c, ValidationReport& report) {
  const bool any_pool_setting = o.decode_instances > 0 || o.prefill_tp > 0 || o.decode_tp > 0 ||
                                o.prefill_max_num_seqs > 0 || o.decode_max_num_seqs > 0 ||
                                o.prefill_max_num_batched_tokens > 0 ||
                                o.decode_max_num_batched_tokens > 0 ||
                                !o.prefill_gpu.empty() || !o.decode_gpu.empty();
  if (o.prefill_instances == 0) {
    if (any_pool_setting) {
      report.error("serving.prefill_instances",
                   "the per-pool settings (--decode-instances, --prefill-tp, --decode-tp, "
                   "--prefill-/--decode-max-num-seqs, --prefill-/--decode-max-num-batched-"
                   "tokens, --prefill-/--decode-gpu) need a disaggregated layout: give "
                   "--prefill-instances X too");
    }
    return;
  }
  if (o.decode_instances == 0) {
    report.error("serving.decode_instances",
                 "a disaggregated layout needs at least one decode instance: give "
                 "--decode-instances Y (Y >= 1) with --prefill-instances");
  }
  if (o.replicas != 1) {
    report.error("serving.replicas",
                 "a disaggregated layout sets its instances with --prefill-instances and "
                 "--decode-instances; leave --replicas out");
  }
  if (o.preemption == serving::PreemptionMode::kSwap) {
    // A decode instance holds the blocks it reserved for KV on its way (Replica::
    // reserve_remote_kv); a swapped-out request, served first, could wait for them forever.
    report.error("serving.preemption",
                 "a disaggregated layout preempts by recompute, as vLLM V1's P/D does (V1 has "
                 "no swap): leave --preemption swap out");
  }
  if (o.scheduler == "static") {
    report.error("serving.scheduler", "a disaggregated layout runs the vllm or sarathi "
                                      "scheduler on each pool, not static");
  }
  DisaggregatedServe& d = c.disaggregated.emplace();
  d.topology = o.topology;
  d.prefill_instances = static_cast<std::int32_t>(o.prefill_instances);
  d.base_tp = o.tp;
  d.prefill_engine = c.engine;
  BudgetRequest& pre = d.prefill_engine;
  BudgetRequest& dec = c.engine;
  if (o.prefill_tp > 0) pre.tp = o.prefill_tp;
  if (o.decode_tp > 0) dec.tp = o.decode_tp;
  if (o.prefill_max_num_seqs > 0) pre.max_num_seqs = o.prefill_max_num_seqs;
  if (o.decode_max_num_seqs > 0) dec.max_num_seqs = o.decode_max_num_seqs;
  if (o.prefill_max_num_batched_tokens > 0) {
    pre.max_num_batched_tokens = o.prefill_max_num_batched_tokens;
  }
  if (o.decode_max_num_batched_tokens > 0) {
    dec.max_num_batched_tokens = o.decode_max_num_batched_tokens;
  }
  // Each pool on its own device sheet. NOTE: both pools take the one --kv-cache-dtype and
  // --block-size; a transfer's bytes are the decode pool's layout (what lands there), so a
  // prefill pool on another GPU is assumed to hand over its KV converted to that layout.
  d.base_gpu = o.gpu;
  if (!o.prefill_gpu.empty()) pre.gpu_id = o.prefill_gpu;
  if (!o.decode_gpu.empty()) dec.gpu_id = o.decode_gpu;
  // The topology's node is read for the decode GPU (kv_transfer_link) and holds one GPU type:
  // a prefill pool on another GPU sits in its own GPU's default node, its NVLS from its
  // device sheet (BudgetRequest::topology empty).
  if (pre.gpu_id != dec.gpu_id) pre.topology.clear();
  if (!o.calibration.empty()) {
    // A calibration profile measures one device: it cannot time a pool on another one.
    for (const auto& [gpu, path, flag] :
         {std::tuple{o.prefill_gpu, "serving.prefill_gpu", "--prefill-gpu"},
          std::tuple{o.decode_gpu, "serving.decode_gpu", "--decode-gpu"}}) {
      if (!gpu.empty() && gpu != o.gpu) {
        report.error(path, fmt::format("{} {} differs from --gpu {}, but the calibration "
                                       "profile (--calibration) measures one device: leave "
                                       "the profile out or the pools on one GPU",
                                       flag, gpu, o.gpu));
      }
    }
  }
  c.setup.num_replicas = static_cast<std::int32_t>(std::max<std::int64_t>(1, o.decode_instances));
}

/// Whether the replicas schedule asynchronously (serving::ReplicaConfig::async_scheduling):
/// as given, else the release's default (vllm_behaviour) less the settings with which vLLM
/// turns it off by default. A setting vLLM refuses it with, or one vramsim does not model it
/// with, is reported at engine.async_scheduling when the flag asks for it.
/// Sources: vllm/config/vllm.py, VllmConfig.__post_init__ as of 0.14.0 (PR #27614): explicitly
/// on, pipeline_parallel_size > 1 and speculative methods outside EagleModelTypes (eagle,
/// eagle3, mtp) raise ValueError; unset, they turn it off with a warning. From 0.16.0 it runs
/// with pipeline parallelism (VllmBehaviour::async_scheduling_with_pp; replica.hpp).
/// NOTE: later releases accept draft_model and ngram_gpu drafts; vramsim does not model them
/// with it, so those combinations stay off by default and refused when asked for.
/// Disaggregated prefill/decode (a KV connector) runs with it in vLLM, and the setting applies
/// to both pools (serving::Disaggregation; replica.hpp, KvPoll, for the decode instances'
/// delay).
bool resolve_async_scheduling(const ServeOptions& o, const std::optional<VllmVersion>& version,
                              ValidationReport& report) {
  using serving::SpeculativeMethod;
  std::optional<SpeculativeMethod> method;  // nullopt without speculative decoding
  if (!o.speculative_config.empty()) {
    try {
      method = serving::parse_speculative_config(o.speculative_config,
                                                 "engine.speculative_config")
                   .method;
    } catch (const ConfigError&) {
      // Reported by the budget (engine.speculative_config).
    }
  }
  const bool eagle_kind = !method || *method == SpeculativeMethod::kEagle ||
                          *method == SpeculativeMethod::kEagle3 ||
                          *method == SpeculativeMethod::kMtp;
  std::string conflict;  // why it stays off, "" when nothing stops it
  if (o.pp > 1 && !(version && vllm_behaviour(*version).async_scheduling_with_pp)) {
    conflict = fmt::format("pipeline parallelism (engine.pp = {}) under vLLM {}: releases "
                           "before 0.16.0 refuse the two together (vllm/config/vllm.py)",
                           o.pp, o.vllm_version);
  } else if (!eagle_kind) {
    conflict = fmt::format("speculative method '{}' (engine.speculative_config): vLLM 0.14 "
                           "runs async scheduling only with eagle, eagle3 and mtp drafts "
                           "(vllm/config/vllm.py, EagleModelTypes)",
                           serving::to_string(*method));
  }
  if (o.async_scheduling) {
    if (*o.async_scheduling && !conflict.empty()) {
      report.error("engine.async_scheduling",
                   fmt::format("async scheduling cannot run with {}; leave "
                               "--async-scheduling out or give --no-async-scheduling",
                               conflict));
      return false;
    }
    return *o.async_scheduling;
  }
  return conflict.empty() && version && vllm_behaviour(*version).async_scheduling;
}

}  // namespace

ServeConfig serve_config(const ServeOptions& o) {
  ValidationReport report;
  ServeConfig c;
  c.scenario_text = o.scenario_text;
  c.settings = resolved_inputs_json(o);
  c.engine = budget_request(o);
  c.trace = workload_spec(o, report);
  serving::ServingSetup& s = c.setup;
  s.seed = static_cast<std::uint64_t>(o.seed);
  s.num_replicas = static_cast<std::int32_t>(o.replicas);
  s.data_parallel_size = static_cast<std::int32_t>(o.data_parallel_size);  // lock-step: serve_run
  s.scheduler = o.scheduler;
  s.router = o.router;
  s.replica.limits.preemption = o.preemption;
  s.replica.limits.chunk_size = o.chunk_size;
  s.replica.limits.enable_chunked_prefill = o.enable_chunked_prefill;
  s.replica.limits.long_prefill_token_threshold = o.long_prefill_token_threshold;
  // An invalid release is reported by the budget (engine.vllm_version).
  const std::optional<VllmVersion> version = parse_vllm_version(o.vllm_version);
  if (version) s.replica.limits.reserve_full_isl = vllm_behaviour(*version).reserve_full_isl;
  s.replica.async_scheduling = resolve_async_scheduling(o, version, report);
  c.enable_prefix_caching = o.enable_prefix_caching;
  if (version && unmodelled_release(*version).empty() && !vllm_behaviour(*version).v1_engine) {
    // A V0 release (vllm_version.hpp): V0's scheduler and no prefix caching unless asked for;
    // chunked prefill and the batch limits are resolved with max_model_len by the budget
    // (vllm_v0_defaults) and copied into the limits by prepare_serve.
    if (!o.given("serving.scheduler")) s.scheduler = "vllm-v0";
    if (!o.given("serving.enable_prefix_caching")) c.enable_prefix_caching = false;
  }
  if (s.scheduler == "vllm-v0") {
    if (o.pp > 1) {
      report.error("engine.pp",
                   fmt::format("{} with the vllm-v0 scheduler: V0 runs one scheduler per "
                               "pipeline stage (virtual engines), which is not modelled; use "
                               "--pp 1, or a V1 release (--vllm-version {} or later)",
                               o.pp, to_string(kOldestModelledV1Vllm)));
    }
    if (o.prefill_instances > 0) {
      report.error("serving.prefill_instances",
                   "a disaggregated layout with the vllm-v0 scheduler is not modelled (V0's "
                   "disaggregated prefill was experimental); use a V1 release");
    }
  }
  if (o.enable_lora) {
    if (s.scheduler != "vllm" && s.scheduler != "vllm-v0" && s.scheduler != "sarathi") {
      report.error("serving.scheduler",
                   fmt::format("scheduler '{}' does not bound the adapters of a step by "
                               "max_loras; with --enable-lora use vllm, vllm-v0 or sarathi",
                               s.scheduler));
    }
    s.replica.limits.max_loras = o.max_loras;
  }
  c.swap_space = o.swap_space;
  const bool lmcache = o.kv_offloading_backend == "lmcache";
  if ((o.kv_offloading_size > Bytes(0) || lmcache) && !o.enable_prefix_caching) {
    report.error(lmcache ? "engine.kv_offloading_backend" : "engine.kv_offloading_size",
                 "needs serving.enable_prefix_caching (--enable-prefix-caching): the offload "
                 "tier is looked up by prefix block hashes");
  }
  // LMCache's own configuration may turn its disk tier on (local_disk).
  const bool lmcache_disk =
      lmcache && o.kv_offloading_disk_size == Bytes(0) &&
      read_lmcache_config(o.lmcache_config).local_disk.has_value();
  const bool disk = o.kv_offloading_disk_size > Bytes(0) || lmcache_disk;
  if (disk && o.kv_offloading_size == Bytes(0) && !lmcache) {
    report.error("engine.kv_offloading_disk_size",
                 "needs engine.kv_offloading_size (--kv-offloading-size): the disk tier is "
                 "written through from the host-memory tier and read back through it");
  }
  const auto disk_bandwidth = [&](const std::string& text, std::string_view path,
                                  std::string_view flag, Bandwidth& out) {
    if (!disk && !text.empty()) {
      report.error(std::string(path),
                   fmt::format("{} is for the KV disk tier: give --kv-offloading-disk-size too",
                               flag));
    } else if (disk && text.empty()) {
      report.error(std::string(path),
                   fmt::format("the KV disk tier needs {} (e.g. 7GB/s, decimal GB): no "
                               "datasheet gives it for your disk; measure it, e.g. with fio",
                               flag));
    } else if (disk) {
      out = parse_bandwidth(text);  // checked when set
    }
  };
  disk_bandwidth(o.kv_offloading_disk_read_bandwidth, "engine.kv_offloading_disk_read_bandwidth",
                 "--kv-offloading-disk-read-bandwidth", s.replica.disk_read);
  disk_bandwidth(o.kv_offloading_disk_write_bandwidth,
                 "engine.kv_offloading_disk_write_bandwidth",
                 "--kv-offloading-disk-write-bandwidth", s.replica.disk_write);
  disaggregate(o, c, report);
  s.timeseries_interval = o.timeseries_interval;
  s.max_requests_in_system = o.max_requests_in_system;
  s.slo.ttft = o.slo_ttft;
  s.slo.tpot = o.slo_tpot;
  s.slo.e2e = o.slo_e2e;
  if (o.max_concurrency) {
    if (*o.max_concurrency > std::numeric_limits<std::int32_t>::max()) {
      report.error("workload.max_concurrency",
                   fmt::format("must be at most {}, got {}",
                               std::numeric_limits<std::int32_t>::max(), *o.max_concurrency));
    } else {
      s.clients.max_concurrency = static_cast<std::int32_t>(*o.max_concurrency);
    }
    s.clients.think_time = o.think_time;
    // vLLM's --request-rate defaults to inf: every request due at once (vllm/benchmarks/
    // serve.py, get_request yields them without delay and the semaphore lets N through). A
    // synthetic stream's arrivals apply only when --rate is given, a trace's only with
    // --trace-arrivals (vLLM's timed-trace replay, self_timed).
    s.clients.send_all_at_start = c.trace.kind == serving::TraceKind::kFile
                                      ? !o.trace_arrivals
                                      : !o.rate.has_value();
    refuse_closed_loop_without_lengths(o, c.trace, report);
  } else if (o.think_time > Duration::zero()) {
    report.error("workload.think_time", "needs workload.max_concurrency (--max-concurrency): "
                                        "think time is a closed-loop client's");
  }
  throw_if_errors(located(o, report));
  return c;
}

ServeAnswer prepare_serve(const ServeOptions& o) {
  return at_origins(o, [&] { return prepare_serve(serve_config(o)); });
}

}  // namespace vramsim::run
