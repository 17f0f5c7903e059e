#include "sim/run/serve_options.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>
#include <tuple>

#include "sim/core/error.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/vllm_version.hpp"
#include "sim/run/data_root.hpp"
#include "sim/serving/speculative.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"
#include "sim/serving/traces/length_distribution.hpp"

namespace vramsim::run {

namespace {

using O = ServeOptions;
using K = ValueKind;
using P = PathRule;

std::string_view quantization_names() {
  static const std::string names = join_names(model::kQuantMethods);
  return names;
}
std::string_view trace_format_names() { return names_list<serving::kTraceFormats>(); }
std::string_view malformed_names() { return names_list<serving::kMalformedRowPolicies>(); }
std::string_view preemption_names() { return names_list<serving::kPreemptionModes>(); }
std::string_view synthetic_names() {
  static const std::string names =
      fmt::format("azure-conv (fitted to the Azure 2023 conversation trace), {}",
                  names_list<serving::kArrivalProcesses>());
  return names;
}

template <auto M, std::int64_t kMin, std::int64_t kMax>
std::optional<std::string> set_in_range(ServeOptions& o, const RawValue& v) {
  const std::int64_t n = std::get<std::int64_t>(v);
  if (n < kMin || n > kMax) return fmt::format("must be in [{}, {}], got {}", kMin, kMax, n);
  o.*M = n;
  return std::nullopt;
}
template <auto M>
std::optional<std::string> set_nonnegative(ServeOptions& o, const RawValue& v) {
  const std::int64_t n = std::get<std::int64_t>(v);
  if (n < 0) return fmt::format("must be >= 0, got {}", n);
  o.*M = n;
  return std::nullopt;
}

/// A bandwidth with its unit ("7GB/s", sim/core/units.hpp parse_bandwidth), > 0, kept as
/// written.
template <auto M>
std::optional<std::string> set_disk_bandwidth(ServeOptions& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  try {
    if (!(parse_bandwidth(text) > Bandwidth::bytes_per_second(0.0))) {
      return fmt::format("must be positive, got '{}'", text);
    }
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  o.*M = text;
  return std::nullopt;
}

// --async-scheduling: true or false as given; unset (monostate) follows the release.
std::optional<std::string> set_async_scheduling(ServeOptions& o, const RawValue& v) {
  o.async_scheduling = std::get<bool>(v);
  return std::nullopt;
}
RawValue get_async_scheduling(const ServeOptions& o) {
  if (!o.async_scheduling) return std::monostate{};
  return *o.async_scheduling;
}

constexpr std::string_view kVllm = "vLLM's default (vllm/engine/arg_utils.py)";
constexpr std::string_view kVllmGpu =
    "vLLM's default for the GPU (run::default_max_num_seqs / default_max_num_batched_tokens)";
constexpr std::string_view kWorkload = "the workload's own (sim/serving/traces)";
constexpr std::string_view kNone = "none";
constexpr std::string_view kW = "Workload";
constexpr std::string_view kS = "Serving";
constexpr std::string_view kSlo = "Objectives (goodput)";

// The schema. Defaults are ServeOptions' initial values; `get` reads them back.
constexpr ServeOptionRow kRows[] = {
    {"model.id", "--model", K::kString, "", "required",
     "Zoo model id (Hugging Face, case-insensitive) or config.json path", P::kModel, nullptr,
     set_plain<&O::model>, get_plain<&O::model>},
    {"model.revision", "--revision", K::kString, "", "main",
     "Branch, tag or commit of a Hugging Face id (hub cache and hub; as vLLM's --revision)",
     P::kNone, nullptr, set_plain<&O::revision>, get_plain<&O::revision>},
    {"hardware.gpu", "--gpu", K::kString, "", "required",
     "Device id from topologies/devices (see `vramsim list gpus`)", P::kNone, nullptr,
     set_plain<&O::gpu>, get_plain<&O::gpu>},
    {"hardware.calibration", "--calibration", K::kString, "", "none: the datasheet defaults",
     "Calibration profile (JSON from vramsim-calibrate) for this GPU: measured overheads and "
     "step times replace the datasheet defaults",
     P::kFile, nullptr, set_plain<&O::calibration>, get_plain<&O::calibration>},
    {"hardware.topology", "--topology", K::kString, "",
     "the largest node of topologies/nodes holding the decode GPU (pcie-8x when none does), "
     "the default network",
     "Disaggregated: where the pools sit, for the KV link: a node id of topologies/nodes, a "
     "node file, or a cluster file (node + inter-node network)",
     P::kFileOrId, nullptr, set_plain<&O::topology>, get_plain<&O::topology>},
    {"engine.tp", "--tp", K::kInt, "GPUs", kVllm, "Tensor-parallel degree", P::kNone, nullptr,
     set_plain<&O::tp>, get_plain<&O::tp>, "--tensor-parallel-size"},
    {"engine.pp", "--pp", K::kInt, "GPUs", kVllm, "Pipeline-parallel degree", P::kNone, nullptr,
     set_plain<&O::pp>, get_plain<&O::pp>, "--pipeline-parallel-size"},
    {"engine.dtype", "--dtype", K::kString, "", kVllm,
     "Weights/activations: auto, bf16, fp16, fp32", P::kNone, nullptr, set_plain<&O::dtype>,
     get_plain<&O::dtype>},
    {"engine.kv_cache_dtype", "--kv-cache-dtype", K::kString, "", kVllm,
     "KV cache: auto (= dtype), bf16, fp16, fp8", P::kNone, nullptr,
     set_plain<&O::kv_cache_dtype>, get_plain<&O::kv_cache_dtype>},
    {"engine.quantization", "--quantization", K::kString, "", kVllm, "Weight quantization",
     P::kNone, quantization_names, set_plain<&O::quantization>, get_plain<&O::quantization>},
    {"engine.max_model_len", "--max-model-len", K::kInt, "tokens",
     "the model's limit (config.json)", "Tokens per request (default: the model's limit)",
     P::kNone, nullptr, set_positive<&O::max_model_len>, get_plain<&O::max_model_len>},
    {"engine.max_num_seqs", "--max-num-seqs", K::kInt, "requests", kVllmGpu,
     "Requests per step (default: vLLM's for the GPU)", P::kNone, nullptr,
     set_positive<&O::max_num_seqs>, get_plain<&O::max_num_seqs>},
    {"engine.max_num_batched_tokens", "--max-num-batched-tokens", K::kInt, "tokens", kVllmGpu,
     "Tokens per step (default: vLLM's for the GPU)", P::kNone, nullptr,
     set_positive<&O::max_num_batched_tokens>, get_plain<&O::max_num_batched_tokens>},
    {"engine.long_prefill_token_threshold", "--long-prefill-token-threshold", K::kInt, "tokens",
     "vLLM's default: 0, off (vllm/config/scheduler.py)",
     "vllm scheduler: at most this many prompt tokens of one request per step, so long prompts "
     "are chunked beside decodes (0: off)",
     P::kNone, nullptr, set_nonnegative<&O::long_prefill_token_threshold>,
     get_plain<&O::long_prefill_token_threshold>},
    {"engine.gpu_memory_utilization", "--gpu-memory-utilization", K::kDouble, "fraction", kVllm,
     "Fraction of memory vLLM may use", P::kNone, nullptr,
     set_plain<&O::gpu_memory_utilization>, get_plain<&O::gpu_memory_utilization>},
    {"engine.block_size", "--block-size", K::kInt, "tokens", kVllm, "Tokens per KV block",
     P::kNone, nullptr, set_plain<&O::block_size>, get_plain<&O::block_size>},
    {"engine.num_gpu_blocks", "--num-gpu-blocks", K::kInt, "blocks", "computed by the budget",
     "Override the computed number of KV blocks (default: computed)", P::kNone, nullptr,
     set_positive<&O::num_gpu_blocks>, get_plain<&O::num_gpu_blocks>,
     "--num-gpu-blocks-override"},
    {"engine.kv_cache_memory_bytes", "--kv-cache-memory-bytes", K::kInt, "bytes",
     "unset: sized by vLLM's memory profile (vllm/config/cache.py)",
     "KV cache bytes per GPU, as vLLM's flag (8G = 8 GiB, 8g = 8 GB): the memory profile is "
     "skipped for it and gpu_memory_utilization ignored, so nothing in vLLM checks it fits",
     P::kNone, nullptr, set_positive<&O::kv_cache_memory_bytes>,
     get_plain<&O::kv_cache_memory_bytes>, {}, {}, kNoIntBound},
    {"engine.vllm_version", "--vllm-version", K::kString, "", "0.19.0 (the newest validated)",
     "vLLM release modelled (0.9.0 or later): it selects the profile run's sampler (sort-based "
     "before 0.17) and whether CUDA-graph memory is subtracted from the KV cache (0.21 on)",
     P::kNone, nullptr, set_plain<&O::vllm_version>, get_plain<&O::vllm_version>},
    {"engine.enforce_eager", "--enforce-eager", K::kBool, "", kVllm,
     "No CUDA graphs (as vLLM's flag)", P::kNone, nullptr, set_plain<&O::enforce_eager>,
     get_plain<&O::enforce_eager>},
    {"engine.async_scheduling", "--async-scheduling", K::kBool, "",
     "the release's: on from vLLM 0.14 (PR #27614) unless --pp > 1, a speculative method "
     "other than eagle, eagle3 or mtp, or disaggregated prefill/decode",
     "Plan step N+1 while step N runs (as vLLM's flag): a request arriving during a step "
     "starts one step later, a finished request's blocks are freed one plan later, and the "
     "per-step host time overlaps the GPU step (default: the vLLM release's)",
     P::kNone, nullptr, set_async_scheduling, get_async_scheduling},
    {"engine.kv_offloading_size", "--kv-offloading-size", K::kBytes, "bytes",
     "0B: off (vLLM's default: unset, vllm/config/cache.py)",
     "Host-memory KV offload tier per replica, all TP ranks together as vLLM counts it (vLLM "
     "takes GiB: write 8GiB); it holds prefix blocks for reuse after the GPU cache drops them "
     "(needs prefix caching)",
     P::kNone, nullptr, set_bytes<&O::kv_offloading_size, 0>, get_bytes<&O::kv_offloading_size>},
    {"engine.kv_offloading_disk_size", "--kv-offloading-disk-size", K::kBytes, "bytes",
     "0B: off",
     "KV disk tier per replica behind the host-memory tier, all TP ranks together (LMCache's "
     "local_disk; its max_local_disk_size is GiB per worker): it takes every block the host "
     "tier stores (write-through) and serves prefix hits the host tier has dropped (needs "
     "--kv-offloading-size and both disk bandwidths)",
     P::kNone, nullptr, set_bytes<&O::kv_offloading_disk_size, 0>,
     get_bytes<&O::kv_offloading_disk_size>},
    {"engine.kv_offloading_disk_read_bandwidth", "--kv-offloading-disk-read-bandwidth",
     K::kString, "bytes/s", "none: required with the disk tier",
     "The KV disk's read bandwidth with its unit, e.g. 7GB/s (decimal GB; no datasheet gives "
     "it for your disk and filesystem: measure it, e.g. with fio)",
     P::kNone, nullptr, set_disk_bandwidth<&O::kv_offloading_disk_read_bandwidth>,
     get_plain<&O::kv_offloading_disk_read_bandwidth>},
    {"engine.kv_offloading_disk_write_bandwidth", "--kv-offloading-disk-write-bandwidth",
     K::kString, "bytes/s", "none: required with the disk tier",
     "The KV disk's write bandwidth with its unit, e.g. 5GB/s (decimal GB)",
     P::kNone, nullptr, set_disk_bandwidth<&O::kv_offloading_disk_write_bandwidth>,
     get_plain<&O::kv_offloading_disk_write_bandwidth>},
    {"engine.kv_offloading_backend", "--kv-offloading-backend", K::kString, "",
     "native (vLLM's default, vllm/config/cache.py)",
     "KV offload backend: native (vLLM's OffloadingConnector; lmcache is not modelled)",
     P::kNone, nullptr, set_plain<&O::kv_offloading_backend>,
     get_plain<&O::kv_offloading_backend>},
    {"engine.speculative_config", "--speculative-config", K::kString, "JSON",
     "none: no speculative decoding",
     "Speculative decoding as vLLM's JSON, e.g. '{\"method\": \"eagle3\", \"model\": "
     "\"PATH-OR-ID\", \"num_speculative_tokens\": 3}'; methods: draft_model, eagle, eagle3, "
     "mtp, ngram. The drafter's weights and KV join the budget, its passes the step time",
     P::kNone, nullptr, set_plain<&O::speculative_config>, get_plain<&O::speculative_config>},
    {"engine.spec_acceptance_rate", "--spec-acceptance-rate", K::kString, "fraction",
     "none: required with engine.speculative_config",
     "Speculative decoding: the rate at which the target accepts a draft token, one for every "
     "position (0.7) or one per position (0.8,0.6,0.5); it depends on the data",
     P::kNone, nullptr, set_plain<&O::spec_acceptance_rate>,
     get_plain<&O::spec_acceptance_rate>},
    {"engine.cpu_offload_gb", "--cpu-offload-gb", K::kDouble, "GiB", kVllm,
     "GiB of weights per GPU held in host memory and streamed over the host link every step "
     "(as vLLM's flag; frees device memory for the KV cache)",
     P::kNone, nullptr, set_plain<&O::cpu_offload_gb>, get_plain<&O::cpu_offload_gb>},
    {"engine.enable_lora", "--enable-lora", K::kBool, "", kVllm,
     "Serve LoRA adapters (as vLLM's flag): max_loras slots of max_lora_rank on every GPU, "
     "allocated at load, shrink the KV cache; the adapters' shrink/expand products add to every "
     "step",
     P::kNone, nullptr, set_plain<&O::enable_lora>, get_plain<&O::enable_lora>},
    {"engine.max_loras", "--max-loras", K::kInt, "adapters", "1 (vLLM's default, "
     "vllm/config/lora.py)",
     "LoRA: adapter slots on the GPU, the most distinct adapters in one step", P::kNone,
     nullptr, set_plain<&O::max_loras>, get_plain<&O::max_loras>},
    {"engine.max_lora_rank", "--max-lora-rank", K::kInt, "", "16 (vLLM's default)",
     "LoRA: the rank every slot is allocated at; one of 1, 8, 16, 32, 64, 128, 256, 320, 512",
     P::kNone, nullptr, set_plain<&O::max_lora_rank>, get_plain<&O::max_lora_rank>},
    {"engine.max_cpu_loras", "--max-cpu-loras", K::kInt, "adapters",
     "0: max_loras (vLLM's default)",
     "LoRA: adapters kept in host memory (an LRU cache, >= max_loras); an adapter outside the "
     "GPU slots is copied from it over the host link",
     P::kNone, nullptr, set_nonnegative<&O::max_cpu_loras>, get_plain<&O::max_cpu_loras>},
    {"engine.lora_dtype", "--lora-dtype", K::kString, "", "auto: the model's dtype (vLLM's)",
     "LoRA: the adapters' dtype: auto, float16 or bfloat16", P::kNone, nullptr,
     set_plain<&O::lora_dtype>, get_plain<&O::lora_dtype>},
    {"engine.fully_sharded_loras", "--fully-sharded-loras", K::kBool, "", kVllm,
     "LoRA under TP: split the column layers' A over the rank and the row layers' B over the "
     "output (S-LoRA's sharding) instead of replicating them",
     P::kNone, nullptr, set_plain<&O::fully_sharded_loras>,
     get_plain<&O::fully_sharded_loras>},
    {"engine.data_parallel_size", "--data-parallel-size", K::kInt, "engines", kVllm,
     "Data-parallel engines (DP ranks) of tp x pp GPUs each, every one with its own batch and "
     "KV cache; an MoE model's ranks step together and share the experts (see "
     "--enable-expert-parallel)",
     P::kNone, nullptr, set_in_range<&O::data_parallel_size, 1, 4096>,
     get_plain<&O::data_parallel_size>, "--dp"},
    {"engine.enable_expert_parallel", "--enable-expert-parallel", K::kBool, "", kVllm,
     "MoE: shard the routed experts over the data_parallel_size x tp GPUs (contiguous ranges "
     "per GPU) instead of splitting every expert (as vLLM's flag)",
     P::kNone, nullptr, set_plain<&O::enable_expert_parallel>,
     get_plain<&O::enable_expert_parallel>},
    {"engine.all2all_backend", "--all2all-backend", K::kString, "",
     "allgather_reducescatter (vLLM's default, vllm/config/parallel.py)",
     "Expert parallelism: how MoE layers move tokens between GPUs", P::kNone,
     serving::all2all_backend_names, set_plain<&O::all2all_backend>,
     get_plain<&O::all2all_backend>},
    {"engine.expert_load_imbalance", "--expert-load-imbalance", K::kDouble, "ratio",
     "1: uniform routing, the lower bound",
     "Expert parallelism: the busiest expert's tokens over the mean per step (>= 1); the GPU "
     "holding it computes that much more; it depends on the model and the data",
     P::kNone, nullptr, set_plain<&O::expert_load_imbalance>,
     get_plain<&O::expert_load_imbalance>},
    {"seed", "--seed", K::kInt, "", "0", "Seed (recorded in the results file)", P::kNone,
     nullptr, set_plain<&O::seed>, get_plain<&O::seed>, {}, {}, kNoIntBound},

    {"workload.trace", "--trace", K::kString, "", "none: a synthetic workload",
     "Replay a trace file (Azure CSV, Mooncake JSONL, or arrival_s,prompt_tokens,output_tokens "
     "CSV)",
     P::kFile, nullptr, set_plain<&O::trace>, get_plain<&O::trace>, {}, kW},
    {"workload.format", "--trace-format", K::kString, "", "auto: from the file", "Trace format",
     P::kNone, trace_format_names,
     set_enum<&O::trace_format, serving::trace_format_from_string, trace_format_names>,
     get_enum<&O::trace_format>, {}, kW},
    {"workload.on_malformed", "--on-malformed", K::kString, "", "error",
     "Malformed trace rows (counted and reported)", P::kNone, malformed_names,
     set_enum<&O::on_malformed, serving::malformed_row_policy_from_string, malformed_names>,
     get_enum<&O::on_malformed>, {}, kW},
    {"workload.synthetic", "--synthetic", K::kString, "", "azure-conv",
     "Without --trace, the synthetic workload", P::kNone, synthetic_names,
     set_plain<&O::synthetic>, get_plain<&O::synthetic>, {}, kW},
    {"workload.rate", "--rate", K::kDouble, "requests/s", kWorkload,
     "Synthetic arrival rate, requests per second", P::kNone, nullptr, set_plain<&O::rate>,
     get_plain<&O::rate>, {}, kW},
    {"workload.cv", "--cv", K::kDouble, "", kWorkload,
     "Gamma arrivals: coefficient of variation of the gaps", P::kNone, nullptr,
     set_plain<&O::cv>, get_plain<&O::cv>, {}, kW},
    {"workload.num_requests", "--num-requests", K::kInt, "requests", "1000",
     "Synthetic requests to generate", P::kNone, nullptr, set_plain<&O::num_requests>,
     get_plain<&O::num_requests>, {}, kW},
    {"workload.duration", "--duration", K::kDuration, "", kNone,
     "Synthetic: stop generating after this long (e.g. 60s)", P::kNone, nullptr,
     set_duration<&O::duration>, get_duration<&O::duration>, {}, kW},
    {"workload.prompt_tokens", "--prompt-tokens", K::kString, "tokens", kWorkload,
     "Synthetic prompt lengths, e.g. fixed:512, uniform:100:2000, "
     "lognormal:mean=1155,median=1020, zipf:1.1:1:4096, trace:FILE",
     P::kNone, nullptr, set_plain<&O::prompt_tokens>, get_plain<&O::prompt_tokens>, {}, kW},
    {"workload.output_tokens", "--output-tokens", K::kString, "tokens", kWorkload,
     "Synthetic output lengths (same forms)", P::kNone, nullptr, set_plain<&O::output_tokens>,
     get_plain<&O::output_tokens>, {}, kW},
    {"workload.prefix_groups", "--prefix-groups", K::kInt, "groups", "0: none",
     "Synthetic shared prefixes: number of groups", P::kNone, nullptr,
     set_plain<&O::prefix_groups>, get_plain<&O::prefix_groups>, {}, kW},
    {"workload.num_lora_adapters", "--num-lora-adapters", K::kInt, "adapters",
     "0: every request uses the base model",
     "LoRA: each request names one of this many adapters (needs --enable-lora), drawn with "
     "workload.lora_distribution from the run's seed",
     P::kNone, nullptr, set_nonnegative<&O::num_lora_adapters>,
     get_plain<&O::num_lora_adapters>, {}, kW},
    {"workload.lora_distribution", "--lora-distribution", K::kString, "", "uniform",
     "LoRA: how requests pick their adapter: uniform, or zipf:S (adapter k with weight 1/k^S)",
     P::kNone, nullptr, set_plain<&O::lora_distribution>, get_plain<&O::lora_distribution>,
     {}, kW},
    {"workload.prefix_tokens", "--prefix-tokens", K::kInt, "tokens", "0: none",
     "Synthetic shared prefixes: tokens per prefix", P::kNone, nullptr,
     set_plain<&O::prefix_tokens>, get_plain<&O::prefix_tokens>, {}, kW},
    {"workload.time_scale", "--time-scale", K::kDouble, "", "1: as recorded",
     "Replay k times faster (arrival / k)", P::kNone, nullptr, set_plain<&O::time_scale>,
     get_plain<&O::time_scale>, {}, kW},
    {"workload.window_start", "--window-start", K::kDuration, "", kNone,
     "Take requests from this trace time (e.g. 600s)", P::kNone, nullptr,
     set_duration<&O::window_start>, get_duration<&O::window_start>, {}, kW},
    {"workload.window_end", "--window-end", K::kDuration, "", kNone,
     "... up to this trace time", P::kNone, nullptr, set_duration<&O::window_end>,
     get_duration<&O::window_end>, {}, kW},
    {"workload.max_requests", "--max-requests", K::kInt, "requests", kNone,
     "Stop after this many requests", P::kNone, nullptr, set_positive<&O::max_requests>,
     get_plain<&O::max_requests>, {}, kW},
    {"workload.max_prompt_tokens", "--max-prompt-tokens", K::kInt, "tokens", kNone,
     "Cap prompt lengths (counted)", P::kNone, nullptr,
     set_positive<&O::max_prompt_tokens>, get_plain<&O::max_prompt_tokens>, {}, kW},
    {"workload.max_output_tokens", "--max-output-tokens", K::kInt, "tokens", kNone,
     "Cap output lengths (counted)", P::kNone, nullptr,
     set_positive<&O::max_output_tokens>, get_plain<&O::max_output_tokens>, {}, kW},
    {"workload.max_total_tokens", "--max-total-tokens", K::kInt, "tokens", kNone,
     "Drop requests longer than this (counted)", P::kNone, nullptr,
     set_positive<&O::max_total_tokens>, get_plain<&O::max_total_tokens>, {}, kW},
    {"workload.max_concurrency", "--max-concurrency", K::kInt, "requests",
     "none: open loop, each request sent at its arrival",
     "Closed loop as `vllm bench serve --max-concurrency`: at most this many requests in flight "
     "client-side; without --rate every request is due at once, so N clients each send the next "
     "when the last ends; with --rate the open-loop stream waits for a free client",
     P::kNone, nullptr, set_positive<&O::max_concurrency>,
     get_plain<&O::max_concurrency>, {}, kW},
    {"workload.think_time", "--think-time", K::kDuration, "", "0s",
     "Closed loop: a client waits this long after a response before its next request",
     P::kNone, nullptr, set_duration<&O::think_time>, get_duration<&O::think_time>, {}, kW},
    {"workload.trace_arrivals", "--trace-arrivals", K::kBool, "",
     "off: closed-loop clients send a trace's requests all due at once",
     "With --max-concurrency and --trace: send each request at its trace arrival, the client cap "
     "holding back those that find every client busy (a capped open-loop replay, as "
     "--max-concurrency with --rate caps a synthetic stream)",
     P::kNone, nullptr, set_plain<&O::trace_arrivals>, get_plain<&O::trace_arrivals>, {}, kW},

    {"serving.replicas", "--replicas", K::kInt, "replicas", "1",
     "Independent model replicas behind the router", P::kNone, nullptr,
     set_in_range<&O::replicas, 1, 4096>, get_plain<&O::replicas>, {}, kS},
    {"serving.scheduler", "--scheduler", K::kString, "", "vllm (vLLM V1's scheduler)",
     "vllm, sarathi, static (see `vramsim list policies`)", P::kNone, nullptr,
     set_plain<&O::scheduler>, get_plain<&O::scheduler>, {}, kS},
    {"serving.router", "--router", K::kString, "", "round-robin",
     "round-robin, least-outstanding-tokens, prefix-aware", P::kNone, nullptr,
     set_plain<&O::router>, get_plain<&O::router>, {}, kS},
    {"serving.preemption", "--preemption", K::kString, "", "recompute (vLLM V1's)",
     "Preemption mode", P::kNone, preemption_names,
     set_enum<&O::preemption, serving::preemption_mode_from_string, preemption_names>,
     get_enum<&O::preemption>, {}, kS},
    {"serving.chunk_size", "--chunk-size", K::kInt, "tokens",
     "512 (Sarathi-Serve evaluates chunks of 512 to 2048 tokens)", "sarathi: tokens per step",
     P::kNone, nullptr, set_plain<&O::chunk_size>, get_plain<&O::chunk_size>, {}, kS},
    {"serving.swap_space", "--swap-space", K::kBytes, "bytes", kVllm,
     "Host memory per replica for swapped KV (e.g. 4GiB)", P::kNone, nullptr,
     set_bytes<&O::swap_space, 0>, get_bytes<&O::swap_space>, {}, kS},
    {"serving.enable_prefix_caching", "--enable-prefix-caching", K::kBool, "",
     "on (vLLM V1's default)",
     "Reuse cached KV blocks of shared prefixes (on by default, as vLLM V1)", P::kNone, nullptr,
     set_plain<&O::enable_prefix_caching>, get_plain<&O::enable_prefix_caching>, {}, kS},
    {"serving.enable_chunked_prefill", "--enable-chunked-prefill", K::kBool, "",
     "on (vLLM V1's default)",
     "Split long prompts over steps (on by default, as vLLM V1); off, a step holds a whole "
     "prompt and the profile run that sizes the KV cache uses max_model_len tokens",
     P::kNone, nullptr, set_plain<&O::enable_chunked_prefill>,
     get_plain<&O::enable_chunked_prefill>},  // an engine setting: budget reads it too
    {"serving.timeseries_interval", "--timeseries-interval", K::kDuration, "", "0s: every step",
     "Sample the time series at most this often per replica (0s: every step)", P::kNone,
     nullptr, set_duration<&O::timeseries_interval>, get_duration<&O::timeseries_interval>, {},
     kS},
    {"serving.max_requests_in_system", "--max-requests-in-system", K::kInt, "requests",
     "4000000 (serving::kDefaultMaxRequestsInSystem, about 0.7 GB)",
     "Refuse the run when more requests than this are in the system at once (arrived, not "
     "finished): each is held in memory, about 180 bytes",
     P::kNone, nullptr, set_positive<&O::max_requests_in_system>,
     get_plain<&O::max_requests_in_system>, {}, kS},
    {"serving.prefill_instances", "--prefill-instances", K::kInt, "instances",
     "0: aggregated (every replica runs prefill and decode)",
     "Disaggregated prefill/decode (xPyD, vLLM's P/D with a KV connector): prefill instances, "
     "each running a request's prompt and first token before its KV moves to a decode instance",
     P::kNone, nullptr, set_in_range<&O::prefill_instances, 0, 4096>,
     get_plain<&O::prefill_instances>, {}, kS},
    {"serving.decode_instances", "--decode-instances", K::kInt, "instances", kNone,
     "Disaggregated: decode instances (needed with --prefill-instances; replaces --replicas)",
     P::kNone, nullptr, set_in_range<&O::decode_instances, 0, 4096>,
     get_plain<&O::decode_instances>, {}, kS},
    {"serving.prefill_tp", "--prefill-tp", K::kInt, "GPUs", "--tp",
     "Disaggregated: tensor parallelism of each prefill instance", P::kNone, nullptr,
     set_in_range<&O::prefill_tp, 0, 4096>, get_plain<&O::prefill_tp>, {}, kS},
    {"serving.decode_tp", "--decode-tp", K::kInt, "GPUs", "--tp",
     "Disaggregated: tensor parallelism of each decode instance", P::kNone, nullptr,
     set_in_range<&O::decode_tp, 0, 4096>, get_plain<&O::decode_tp>, {}, kS},
    {"serving.prefill_max_num_seqs", "--prefill-max-num-seqs", K::kInt, "requests",
     "--max-num-seqs", "Disaggregated: max_num_seqs of each prefill instance", P::kNone,
     nullptr, set_in_range<&O::prefill_max_num_seqs, 0, 1 << 20>,
     get_plain<&O::prefill_max_num_seqs>, {}, kS},
    {"serving.decode_max_num_seqs", "--decode-max-num-seqs", K::kInt, "requests",
     "--max-num-seqs", "Disaggregated: max_num_seqs of each decode instance", P::kNone,
     nullptr, set_in_range<&O::decode_max_num_seqs, 0, 1 << 20>,
     get_plain<&O::decode_max_num_seqs>, {}, kS},
    {"serving.prefill_max_num_batched_tokens", "--prefill-max-num-batched-tokens", K::kInt,
     "tokens", "--max-num-batched-tokens",
     "Disaggregated: max_num_batched_tokens of each prefill instance", P::kNone, nullptr,
     set_in_range<&O::prefill_max_num_batched_tokens, 0, 1 << 24>,
     get_plain<&O::prefill_max_num_batched_tokens>, {}, kS},
    {"serving.decode_max_num_batched_tokens", "--decode-max-num-batched-tokens", K::kInt,
     "tokens", "--max-num-batched-tokens",
     "Disaggregated: max_num_batched_tokens of each decode instance", P::kNone, nullptr,
     set_in_range<&O::decode_max_num_batched_tokens, 0, 1 << 24>,
     get_plain<&O::decode_max_num_batched_tokens>, {}, kS},
    {"serving.prefill_gpu", "--prefill-gpu", K::kString, "", "--gpu",
     "Disaggregated: device id (topologies/devices) of the prefill instances; the pool is sized "
     "and timed on its own sheet",
     P::kNone, nullptr, set_plain<&O::prefill_gpu>, get_plain<&O::prefill_gpu>, {}, kS},
    {"serving.decode_gpu", "--decode-gpu", K::kString, "", "--gpu",
     "Disaggregated: device id of the decode instances (their KV layout sets the bytes each "
     "transfer moves)",
     P::kNone, nullptr, set_plain<&O::decode_gpu>, get_plain<&O::decode_gpu>, {}, kS},

    {"slo.ttft", "--slo-ttft", K::kDuration, "", kNone,
     "Time to first token objective, e.g. 2s", P::kNone, nullptr,
     set_duration<&O::slo_ttft>, get_duration<&O::slo_ttft>, {}, kSlo},
    {"slo.tpot", "--slo-tpot", K::kDuration, "", kNone,
     "Time per output token objective, e.g. 100ms", P::kNone, nullptr,
     set_duration<&O::slo_tpot>, get_duration<&O::slo_tpot>, {}, kSlo},
    {"slo.e2e", "--slo-e2e", K::kDuration, "", kNone, "End-to-end latency objective", P::kNone,
     nullptr, set_duration<&O::slo_e2e>, get_duration<&O::slo_e2e>, {}, kSlo},
};

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

std::span<const ServeOptionRow> serve_option_rows() { return kRows; }

const ServeOptionRow* find_serve_option(std::string_view path_or_flag) {
  return find_option(serve_option_rows(), path_or_flag);
}

ScenarioValues load_serve_scenario(const std::filesystem::path& file) {
  return load_scenario_file(serve_option_rows(), file);
}

ScenarioValues load_serve_scenario_text(std::string_view text, std::string name,
                                        const std::filesystem::path& base_dir) {
  return load_scenario_text(serve_option_rows(), text, std::move(name), base_dir);
}

ServeOptions resolve_serve_options(const ScenarioValues& scenario, const GivenValues& flags) {
  ValidationReport report;
  ServeOptions o = resolve_options(serve_option_rows(), scenario, flags, report);
  if (o.model.empty()) {
    report.error("model.id", "required: a zoo id or a config.json path (or model.id in the "
                             "scenario)");
  }
  if (o.gpu.empty()) {
    report.error("hardware.gpu", "required: a device id, see `vramsim list gpus` (or "
                                 "hardware.gpu in the scenario)");
  }
  throw_if_errors(report);
  return o;
}

BudgetRequest budget_request(const ServeOptions& o) {
  BudgetRequest req;
  req.model_id = o.model;
  req.revision = o.revision;
  req.gpu_id = o.gpu;
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
  req.kv_offloading_size = o.kv_offloading_size;
  req.kv_offloading_backend = o.kv_offloading_backend;
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
    if (!o.topology.empty()) {
      report.error("hardware.topology",
                   "serve reads the topology for the KV link of a disaggregated layout only: "
                   "give --prefill-instances X --decode-instances Y, or leave --topology out");
    }
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
/// eagle3, mtp) raise ValueError; unset, they turn it off with a warning.
/// NOTE: vllm-project/vllm PR #32359 (January 2026) later lets it run with pipeline
/// parallelism, and later releases accept draft_model and ngram_gpu drafts; vramsim models
/// neither (with PP it keeps PP's batches in flight, serving::ReplicaConfig::pipeline_depth),
/// so those combinations stay off by default and refused when asked for. Disaggregated
/// prefill/decode (a KV connector) runs with it in vLLM but is not modelled with it here.
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
  if (o.pp > 1) {
    conflict = fmt::format("pipeline parallelism (engine.pp = {}): vLLM 0.14 refuses it "
                           "(vllm/config/vllm.py) and vramsim does not model the two together",
                           o.pp);
  } else if (!eagle_kind) {
    conflict = fmt::format("speculative method '{}' (engine.speculative_config): vLLM 0.14 "
                           "runs async scheduling only with eagle, eagle3 and mtp drafts "
                           "(vllm/config/vllm.py, EagleModelTypes)",
                           serving::to_string(*method));
  } else if (o.prefill_instances > 0) {
    conflict = "disaggregated prefill/decode (serving.prefill_instances): not modelled with "
               "async scheduling";
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
  if (o.enable_lora) {
    if (o.scheduler != "vllm" && o.scheduler != "sarathi") {
      report.error("serving.scheduler",
                   fmt::format("scheduler '{}' does not bound the adapters of a step by "
                               "max_loras; with --enable-lora use vllm or sarathi",
                               o.scheduler));
    }
    s.replica.limits.max_loras = o.max_loras;
  }
  c.swap_space = o.swap_space;
  if (o.kv_offloading_size > Bytes(0) && !o.enable_prefix_caching) {
    report.error("engine.kv_offloading_size",
                 "needs serving.enable_prefix_caching (--enable-prefix-caching): the offload "
                 "tier is looked up by prefix block hashes");
  }
  const bool disk = o.kv_offloading_disk_size > Bytes(0);
  if (disk && o.kv_offloading_size == Bytes(0)) {
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

ValidationReport located(const ServeOptions& o, const ValidationReport& report) {
  return located(serve_option_rows(), o, report);
}

io::ScenarioFields serving_scenario_fields() { return scenario_fields(serve_option_rows()); }

nlohmann::ordered_json resolved_inputs_json(const ServeOptions& o) {
  return resolved_inputs_json(serve_option_rows(), o);
}

nlohmann::ordered_json resolved_engine_inputs_json(const ServeOptions& o) {
  nlohmann::ordered_json j = resolved_inputs_json(o);
  for (const ServeOptionRow& row : serve_option_rows()) {
    if (!row.group.empty()) j.erase(std::string(row.path));
  }
  return j;
}

}  // namespace vramsim::run
