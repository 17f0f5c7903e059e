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
     "the largest node of topologies/nodes holding the (decode) GPU (pcie-8x when none does), "
     "the default network; NVLS from the device sheet",
     "Where the GPUs sit: a node id of topologies/nodes, a node file, or a cluster file (node + "
     "inter-node network): the node's host memory for the KV offload tier and its NVLS "
     "buffers (budget and serve alike); serve (disaggregated): the pools' KV link too",
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
     "vLLM release modelled (0.9.0 or later): it selects the profile run's sampler (FlashInfer's "
     "before 0.11.1, sort-based before 0.17), the non-torch memory of the start-up CUDA-graph "
     "profile (0.17.1 on) and whether CUDA-graph memory is subtracted from the KV cache (0.21 on)",
     P::kNone, nullptr, set_plain<&O::vllm_version>, get_plain<&O::vllm_version>},
    {"engine.enforce_eager", "--enforce-eager", K::kBool, "", kVllm,
     "No CUDA graphs (as vLLM's flag)", P::kNone, nullptr, set_plain<&O::enforce_eager>,
     get_plain<&O::enforce_eager>},
    {"engine.async_scheduling", "--async-scheduling", K::kBool, "",
     "the release's: on from vLLM 0.14 (PR #27614) unless --pp > 1 before 0.16 or a "
     "speculative method other than eagle, eagle3 or mtp (both pools of disaggregated "
     "prefill/decode)",
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
     "KV offload backend: native (vLLM's OffloadingConnector) or lmcache (LMCacheConnectorV1 "
     "with LMCache's CPU tier: chunks of chunk_size tokens, hits in whole chunks, blocking "
     "loads and stores; its size per worker is --kv-offloading-size / (TP x PP), or without "
     "it --lmcache-config's max_local_cpu_size, else LMCache's default 5 GiB per worker)",
     P::kNone, nullptr, set_plain<&O::kv_offloading_backend>,
     get_plain<&O::kv_offloading_backend>},
    {"engine.lmcache_config", "--lmcache-config", K::kString, "",
     "none: LMCache's defaults (chunk_size 256, max_local_cpu_size 5.0 GiB per worker)",
     "LMCache's YAML configuration (the LMCACHE_CONFIG_FILE file), flat `key: value` lines: "
     "chunk_size, max_local_cpu_size, local_disk, max_local_disk_size are read, other keys "
     "only at LMCache's defaults (needs --kv-offloading-backend lmcache)",
     P::kFile, nullptr, set_plain<&O::lmcache_config>, get_plain<&O::lmcache_config>},
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
    {"serving.scheduler", "--scheduler", K::kString, "",
     "vllm (vLLM V1's scheduler); vllm-v0 for a V0 release (--vllm-version before 0.8)",
     "vllm, vllm-v0, sarathi, static (see `vramsim list policies`)", P::kNone, nullptr,
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
     "on (vLLM V1's default); off for a V0 release (--vllm-version before 0.8)",
     "Reuse cached KV blocks of shared prefixes (on by default, as vLLM V1)", P::kNone, nullptr,
     set_plain<&O::enable_prefix_caching>, get_plain<&O::enable_prefix_caching>, {}, kS},
    {"serving.enable_chunked_prefill", "--enable-chunked-prefill", K::kBool, "",
     "on (vLLM V1's default); a V0 release (before 0.8): on only for max_model_len > 32K",
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

}  // namespace

std::string_view synthetic_names() {
  static const std::string names =
      fmt::format("azure-conv (fitted to the Azure 2023 conversation trace), {}",
                  names_list<serving::kArrivalProcesses>());
  return names;
}

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
