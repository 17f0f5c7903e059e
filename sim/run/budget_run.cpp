#include "sim/run/budget_run.hpp"

#include "sim/cost/profile_for_device.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/memory/calibrated_overheads.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/error.hpp"
#include "sim/cost/validated_bands.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/safetensors_header.hpp"
#include "sim/run/budget_dtype.hpp"
#include "sim/run/budget_node.hpp"
#include "sim/run/budget_suggestions.hpp"
#include "sim/run/vllm_version.hpp"

namespace vramsim::run {

std::int64_t default_max_num_batched_tokens(const hardware::DeviceSpec& device) {
  const bool big = device.memory_total >= GiB(70) && device.id.rfind("a100", 0) != 0;
  return big ? 8192 : 2048;
}

std::int64_t default_max_num_seqs(const hardware::DeviceSpec& device) {
  const bool big = device.memory_total >= GiB(70) && device.id.rfind("a100", 0) != 0;
  return big ? 1024 : 256;
}

namespace {

// vLLM's LoRAConfig from the request (vllm/config/lora.py): max_cpu_loras defaults to max_loras,
// lora_dtype "auto" to the model's dtype. Its settings without --enable-lora are refused:
// vLLM would ignore them, and a user who gives them means LoRA.
void resolve_lora(const BudgetRequest& req, memory::EngineConfig& cfg, ValidationReport& report,
                  std::vector<std::string>& notes) {
  const BudgetRequest defaults;
  if (!req.enable_lora) {
    const auto refuse = [&](bool given, std::string_view path, std::string_view flag) {
      if (given) {
        report.error(std::string(path),
                     fmt::format("ignored without engine.enable_lora (--enable-lora); give "
                                 "--enable-lora to serve LoRA adapters, or drop {}",
                                 flag));
      }
    };
    refuse(req.max_loras != defaults.max_loras, "engine.max_loras", "--max-loras");
    refuse(req.max_lora_rank != defaults.max_lora_rank, "engine.max_lora_rank",
           "--max-lora-rank");
    refuse(req.max_cpu_loras != defaults.max_cpu_loras, "engine.max_cpu_loras",
           "--max-cpu-loras");
    refuse(req.lora_dtype != defaults.lora_dtype, "engine.lora_dtype", "--lora-dtype");
    refuse(req.fully_sharded_loras, "engine.fully_sharded_loras", "--fully-sharded-loras");
    return;
  }
  memory::LoraConfig lora;
  lora.max_loras = req.max_loras;
  lora.max_lora_rank = req.max_lora_rank;
  lora.max_cpu_loras = req.max_cpu_loras == 0 ? req.max_loras : req.max_cpu_loras;
  lora.fully_sharded = req.fully_sharded_loras;
  if (req.lora_dtype == "auto") {
    lora.dtype = cfg.dtype;
  } else if (const std::optional<DType> d = dtype_from_string(req.lora_dtype);
             d && (*d == DType::kBf16 || *d == DType::kFp16)) {
    lora.dtype = *d;
  } else {
    report.error("engine.lora_dtype",
                 fmt::format("expected auto, float16 or bfloat16 (vLLM's LoRADType), got '{}'",
                             req.lora_dtype));
  }
  notes.push_back(fmt::format("LoRA: {} adapter slot(s) of rank {} in {} on every device{}; the "
                              "CPU cache holds {} adapter(s)",
                              lora.max_loras, lora.max_lora_rank, to_string(lora.dtype),
                              lora.fully_sharded ? " (fully sharded)" : "", lora.max_cpu_loras));
  cfg.lora = lora;
}

memory::EngineConfig resolve_engine(const BudgetRequest& req, const model::ModelSpec& spec,
                                    const hardware::DeviceSpec& device,
                                    std::vector<std::string>& notes, bool& chunked) {
  ValidationReport report;
  memory::EngineConfig cfg;
  cfg.tp = static_cast<int>(std::clamp<std::int64_t>(req.tp, -1, 1 << 20));
  cfg.pp = static_cast<int>(std::clamp<std::int64_t>(req.pp, -1, 1 << 20));
  if (req.tp < 1 || req.tp > 4096) report.error("engine.tp", fmt::format("must be in [1, 4096], got {}", req.tp));
  if (req.pp < 1 || req.pp > 4096) report.error("engine.pp", fmt::format("must be in [1, 4096], got {}", req.pp));
  cfg.dtype = resolve_dtype(req.dtype, spec, device, notes, report);
  cfg.kv_cache_dtype = resolve_kv_dtype(req.kv_cache_dtype, cfg.dtype, report);
  std::string quant = req.quantization;
  if ((quant == "none" || quant.empty()) && !spec.checkpoint_quantization.empty()) {
    quant = spec.checkpoint_quantization;
    notes.push_back(fmt::format("quantization: the checkpoint is stored as {}", quant));
  }
  if (const std::optional<int> need = min_capability(quant);
      need && device.compute_capability < *need) {
    // vLLM's QuantizationConfig.get_min_capability, checked against the device's capability at
    // start-up (vllm/model_executor/model_loader/utils.py): "The quantization method X is not
    // supported for the current GPU."
    const bool from_checkpoint = quant != req.quantization;
    report.error(from_checkpoint && spec.checkpoint_quant ? spec.checkpoint_quant->key +
                                                                ".quant_method"
                                                          : "engine.quantization",
                 fmt::format("{}{} needs compute capability {}.{} or newer in vLLM; {} "
                             "(hardware.gpu) has {}.{}: vLLM refuses this combination at start-up",
                             from_checkpoint ? "the checkpoint's quantization " : "", quant,
                             *need / 10, *need % 10, device.id, device.compute_capability / 10,
                             device.compute_capability % 10),
                 from_checkpoint && spec.checkpoint_quant
                     ? SourceLocation{spec.checkpoint_quant->config_file, 0}
                     : SourceLocation{});
  }
  try {
    cfg.weights = model::make_weight_format(cfg.dtype, quant, spec);
  } catch (const ConfigError& e) {
    // A conflict with the checkpoint names its quantization_config key and file, not the flag.
    for (Problem p : e.report().problems()) {
      report.error(p.field == "quantization" ? "engine.quantization" : p.field, p.message,
                   p.where);
    }
  }
  if (cfg.weights.quantization == model::QuantMethod::kMxfp4 && !spec.is_moe()) {
    // vLLM's Mxfp4Config.get_quant_method gives every LinearBase the UnquantizedLinearMethod
    // (older releases raised "Mxfp4 linear layer is not implemented"): without routed experts
    // nothing is quantized. Said, so that bf16-sized weights are not taken for mxfp4 ones.
    notes.push_back(fmt::format(
        "quantization: mxfp4 ({}) quantizes only routed experts and {} has none; vLLM runs every "
        "linear layer unquantized, so all weights stay in {}",
        req.quantization == "mxfp4" ? "--quantization" : "the checkpoint's quant_method",
        spec.name, to_string(cfg.dtype)));
  }
  if (spec.vision) {
    // vLLM's profile run also encodes its largest batch of dummy images or videos (the encoder
    // cache budget, gpu_model_runner.profile_run) unless --skip-mm-profiling or no multimodal
    // input is allowed (--limit-mm-per-prompt at 0). That peak is not modelled; said, so that
    // the KV cache is not taken as vLLM's for multimodal serving.
    notes.push_back(fmt::format(
        "vision encoder: its weights are counted with the model's; the activation of vLLM's "
        "multimodal profile (the encoder run on its largest dummy image batch) is not modelled, "
        "so the KV cache is vLLM's only with --skip-mm-profiling or --limit-mm-per-prompt set "
        "to no images"));
  }
  if (spec.checkpoint_quant && spec.checkpoint_quant->method == model::QuantMethod::kBitsAndBytes &&
      cfg.weights.quantization == model::QuantMethod::kBitsAndBytes && req.tp > 1) {
    // vllm/model_executor/model_loader/bitsandbytes_loader.py: "Prequant BitsAndBytes models
    // with tensor parallelism is not supported. Please try with pipeline parallelism."
    report.error("engine.tp",
                 fmt::format("{} with a pre-quantized bitsandbytes checkpoint: vLLM refuses "
                             "tensor parallelism for it (its quant states cannot be split); use "
                             "pipeline parallelism (--pp) instead",
                             req.tp));
  }
  cfg.max_model_len = req.max_model_len;
  if (cfg.max_model_len == 0) {
    // vLLM's default: the derived length, RoPE scaling applied (hf_config_rope.hpp).
    cfg.max_model_len = spec.max_model_len_default();
    if (cfg.max_model_len == 0) {
      report.error("engine.max_model_len", "required: the model's config.json gives no "
                                      "max_position_embeddings");
    } else if (cfg.max_model_len != spec.max_position_embeddings) {
      notes.push_back(fmt::format("max_model_len {} from the config's RoPE scaling "
                                  "(max_position_embeddings {})",
                                  cfg.max_model_len, spec.max_position_embeddings));
    }
  }
  const std::optional<VllmVersion> version = parse_vllm_version(req.vllm_version);
  chunked = req.enable_chunked_prefill;
  if (version && unmodelled_release(*version).empty() && !vllm_behaviour(*version).v1_engine) {
    // A V0 release: its own defaults for what is unset (vllm_v0_defaults).
    const VllmV0Defaults d = vllm_v0_defaults(
        *version, cfg.max_model_len,
        req.chunked_prefill_given ? std::optional<bool>(req.enable_chunked_prefill)
                                  : std::nullopt,
        req.enable_lora, !req.speculative_config.empty());
    chunked = d.enable_chunked_prefill;
    cfg.max_num_seqs = req.max_num_seqs != 0 ? req.max_num_seqs : d.max_num_seqs;
    cfg.max_num_batched_tokens =
        req.max_num_batched_tokens != 0 ? req.max_num_batched_tokens : d.max_num_batched_tokens;
    notes.push_back(fmt::format(
        "vLLM {} runs the V0 engine by default (V1 from {}): chunked prefill {}{}, "
        "max_num_batched_tokens {}, max_num_seqs {}{}",
        req.vllm_version, to_string(kFirstV1DefaultVllm), chunked ? "on" : "off",
        req.chunked_prefill_given ? " (as given)"
                                  : (chunked ? " (V0 turns it on for max_model_len > 32K)"
                                             : " (V0's default up to max_model_len 32K)"),
        cfg.max_num_batched_tokens, cfg.max_num_seqs,
        req.max_num_batched_tokens != 0 || req.max_num_seqs != 0 ? " (where given, as given)"
                                                                 : " (V0's defaults)"));
  } else {
    cfg.max_num_seqs =
        req.max_num_seqs != 0 ? req.max_num_seqs : default_max_num_seqs(device);
    cfg.max_num_batched_tokens = req.max_num_batched_tokens != 0
                                     ? req.max_num_batched_tokens
                                     : default_max_num_batched_tokens(device);
  }
  // vLLM refuses these at start-up (vllm/config/scheduler.py SchedulerConfig._verify_args);
  // the field is the setting the user gave (the other may be a default), the message names both.
  if (cfg.max_num_batched_tokens < cfg.max_num_seqs) {
    report.error(req.max_num_batched_tokens != 0 ? "engine.max_num_batched_tokens"
                                                 : "engine.max_num_seqs",
                 fmt::format("max_num_batched_tokens ({}) is smaller than max_num_seqs ({}): "
                             "vLLM refuses this at start-up (it must be >= max_num_seqs)",
                             cfg.max_num_batched_tokens, cfg.max_num_seqs));
  }
  if (!chunked && req.max_num_batched_tokens != 0 &&
      cfg.max_num_batched_tokens < cfg.max_model_len) {
    report.error("engine.max_num_batched_tokens",
                 fmt::format("max_num_batched_tokens ({}) is smaller than max_model_len ({}) with "
                             "chunked prefill off (serving.enable_chunked_prefill): vLLM refuses "
                             "this at start-up (a step must hold a whole prompt); raise "
                             "max_num_batched_tokens, lower max_model_len or leave chunked "
                             "prefill on",
                             cfg.max_num_batched_tokens, cfg.max_model_len));
  } else if (!chunked && cfg.max_num_batched_tokens < cfg.max_model_len) {
    // vLLM without chunked prefill: one step must hold a whole prompt, so the token budget, and
    // the profile run that sizes the KV cache with it, is max(max_num_batched_tokens,
    // max_model_len) (SchedulerConfig; issue 12's audit of the start-up logs).
    notes.push_back(fmt::format("chunked prefill off: max_num_batched_tokens {} -> max_model_len "
                                "{} (a step holds a whole prompt; the profile run uses it too)",
                                cfg.max_num_batched_tokens, cfg.max_model_len));
    cfg.max_num_batched_tokens = cfg.max_model_len;
  }
  cfg.gpu_memory_utilization = req.gpu_memory_utilization;
  cfg.block_size = req.block_size;
  if (req.num_gpu_blocks != 0) cfg.num_gpu_blocks_override = req.num_gpu_blocks;
  if (req.kv_cache_memory_bytes != 0) {
    cfg.kv_cache_memory = Bytes(req.kv_cache_memory_bytes);
    notes.push_back(fmt::format("KV cache: {} per device as kv_cache_memory_bytes gives it; vLLM "
                                "skips the memory profile for it and ignores "
                                "gpu_memory_utilization {:.2f}, so the check that it fits is "
                                "vramsim's",
                                format_bytes(*cfg.kv_cache_memory), req.gpu_memory_utilization));
  }
  cfg.enforce_eager = req.enforce_eager;
  if (!version) {
    report.error("engine.vllm_version",
                 fmt::format("expected a vLLM release such as 0.19.0, got '{}'", req.vllm_version));
  } else if (const std::string why = unmodelled_release(*version); !why.empty()) {
    report.error("engine.vllm_version", why);
  } else if (!vllm_behaviour(*version).v1_engine && !req.v0_kv_from_v1_rules) {
    report.error("engine.vllm_version",
                 fmt::format("vLLM {} runs the V0 engine, whose start-up memory profile (its "
                             "profile run, sampler and CUDA-graph accounting) is not modelled: "
                             "budget answers for {} and later; serve, compare, capacity and "
                             "plan model V0's scheduler and size its KV cache with {}'s start-up "
                             "rules, or with --num-gpu-blocks taken from its start-up log",
                             req.vllm_version, to_string(kOldestModelledV1Vllm),
                             to_string(kOldestModelledV1Vllm)));
  } else {
    const bool v0 = !vllm_behaviour(*version).v1_engine;
    // A V0 release in serve: the memory side of the oldest modelled V1 release.
    const VllmBehaviour b = vllm_behaviour(v0 ? kOldestModelledV1Vllm : *version);
    if (v0 && req.num_gpu_blocks == 0 && req.kv_cache_memory_bytes == 0) {
      notes.push_back(fmt::format("vLLM {} (V0 engine): its start-up memory profile is not "
                                  "modelled; the KV cache is sized with {}'s rules (give "
                                  "--num-gpu-blocks from its start-up log for its own figure)",
                                  req.vllm_version, to_string(kOldestModelledV1Vllm)));
    }
    cfg.sampler = b.flashinfer_sampler && req.flashinfer_installed
                      ? memory::SamplerKind::kFlashInferTopKTopP
                      : b.sampler;
    cfg.profiles_cuda_graph_memory = b.profiles_cuda_graph_memory;
    cfg.subtract_cuda_graph = req.subtract_cuda_graph || b.estimates_cuda_graphs;
    if (*version > kNewestModelledVllm) {
      notes.push_back(fmt::format("vLLM {}: answered with the rules of {} (the newest release "
                                  "whose accounting is modelled; validated on {})",
                                  req.vllm_version, to_string(kNewestModelledVllm),
                                  to_string(kNewestValidatedVllm)));
    }
    switch (cfg.sampler) {
      case memory::SamplerKind::kSortTopKTopP:
        notes.push_back(fmt::format("vLLM {}: the profile run samples with the sort-based "
                                    "top-k/top-p path (before 0.17's Triton kernel)",
                                    req.vllm_version));
        break;
      case memory::SamplerKind::kFlashInferTopKTopP:
        notes.push_back(fmt::format("vLLM {}: the profile run samples with FlashInfer's "
                                    "top-k/top-p kernel (used where FlashInfer is installed, "
                                    "up to 0.11.0)",
                                    req.vllm_version));
        break;
      case memory::SamplerKind::kTritonTopKTopP: break;
    }
    if (!b.profiles_cuda_graph_memory) {
      notes.push_back(fmt::format("vLLM {}: no start-up CUDA-graph memory profile (from "
                                  "0.17.1), so less non-torch memory",
                                  req.vllm_version));
    }
    if (b.estimates_cuda_graphs) {
      notes.push_back(fmt::format("vLLM {}: the CUDA-graph estimate is subtracted from the KV "
                                  "cache (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default "
                                  "from 0.21)",
                                  req.vllm_version));
    }
  }
  if (!(req.cpu_offload_gb >= 0.0) || req.cpu_offload_gb > 1e6) {
    report.error("engine.cpu_offload_gb",
                 fmt::format("must be in [0, 1e6] GiB, got {}", req.cpu_offload_gb));
  } else {
    // vLLM: cpu_offload_gb * 1024**3 bytes (vllm/config/cache.py; GiB, as its help says).
    cfg.cpu_offload = round_to_bytes(req.cpu_offload_gb * static_cast<double>(GiB(1).count()));
  }
  resolve_lora(req, cfg, report, notes);
  if (req.data_parallel_size < 1 || req.data_parallel_size > 4096) {
    report.error("engine.data_parallel_size",
                 fmt::format("must be in [1, 4096], got {}", req.data_parallel_size));
  } else {
    cfg.data_parallel_size = static_cast<int>(req.data_parallel_size);
  }
  cfg.enable_expert_parallel = req.enable_expert_parallel;
  if (!serving::all2all_backend_from_string(req.all2all_backend)) {
    report.error("engine.all2all_backend",
                 fmt::format("unknown backend '{}'; valid: {}", req.all2all_backend,
                             serving::all2all_backend_names()));
  } else if (req.all2all_backend != "allgather_reducescatter" &&
             !(req.enable_expert_parallel && spec.moe)) {
    report.error("engine.all2all_backend",
                 "an all2all backend moves tokens between expert-parallel ranks: it needs "
                 "--enable-expert-parallel on an MoE model");
  }
  if (!(req.expert_load_imbalance >= 1.0 && req.expert_load_imbalance <= 1e6)) {
    report.error("engine.expert_load_imbalance",
                 fmt::format("the busiest expert's tokens over the mean per step: must be in "
                             "[1, 1e6], got {}",
                             req.expert_load_imbalance));
  } else if (req.expert_load_imbalance != 1.0 && !(req.enable_expert_parallel && spec.moe)) {
    report.error("engine.expert_load_imbalance",
                 "weighs only on expert-parallel ranks: it needs --enable-expert-parallel on "
                 "an MoE model");
  }
  if (spec.moe && req.enable_expert_parallel && cfg.tp * cfg.data_parallel_size == 1) {
    notes.push_back("expert parallelism on one device: nothing to shard (vLLM ignores it when "
                    "data_parallel_size x tp is 1)");
  }
  if (!spec.moe && cfg.data_parallel_size > 1) {
    notes.push_back(fmt::format("data parallelism on a dense model: {} independent engines "
                                "(vLLM runs each DP rank of a dense model on its own), each "
                                "device as below",
                                cfg.data_parallel_size));
  }
  if (report.ok()) memory::validate(cfg, spec, report);
  throw_if_errors(report);
  return cfg;
}

/// vLLM refuses to start when the memory free at start-up (the device less the CUDA context)
/// is less than gpu_memory_utilization asks ("Free memory on device ... is less than desired
/// GPU memory utilization", vllm/v1/worker/gpu_worker.py): not a fit, whatever the KV cache
/// would hold. A calibration profile's measured context can be that large.
void check_startup_memory(memory::BudgetResult& r) {
  if (!r.fits) return;
  for (const memory::DeviceBudget& d : r.devices) {
    const Bytes free_at_start = d.total - d.cuda_context;
    if (free_at_start >= d.usable) continue;
    r.fits = false;
    r.shortfall = d.usable - free_at_start;
    r.max_model_len_that_fits = 0;  // no request runs on an engine that does not start
    r.reason = fmt::format(
        "device {}: the CUDA context ({}) leaves {} of {} free at start-up, less than the {} "
        "that gpu_memory_utilization asks; vLLM refuses to start",
        d.device_index, format_bytes(d.cuda_context),
        format_bytes(free_at_start > Bytes(0) ? free_at_start : Bytes(0)), format_bytes(d.total),
        format_bytes(d.usable));
    return;
  }
}

Margin margin_of(const memory::BudgetResult& r) {
  Margin m;
  if (r.devices.empty()) return m;
  const memory::DeviceBudget* d = &r.devices.front();
  for (const memory::DeviceBudget& x : r.devices) {
    if (x.kv_available < d->kv_available) d = &x;
  }
  const Bytes block = d->page_bytes * d->layers_per_group;
  m.bytes = r.fits ? d->kv_available - block * r.blocks_per_request : Bytes(0) - r.shortfall;
  m.share_of_usable = d->usable > Bytes(0) ? static_cast<double>(m.bytes.count()) /
                                                 static_cast<double>(d->usable.count())
                                           : 0.0;
  m.knife_edge = std::abs(m.share_of_usable) < kKnifeEdgeShare;
  return m;
}

// The validated band of the KV-cache accounting, and whether this setting lies inside what
// the start-up logs behind it cover (one H100 per engine, vLLM 0.19, no offload or drafter).
std::string kv_error_band(const BudgetAnswer& a) {
  if (a.engine.kv_cache_memory) {
    return "KV tokens exact: the cache is given (kv_cache_memory_bytes), only the check that "
           "the device holds it rests on the modelled weights, activations and overheads";
  }
  if (a.calibration) {
    return "calibrated overheads: not yet validated against vLLM start-up logs";
  }
  const cost::KvTokensBand& band = cost::kStartupKvBand;
  std::string out = fmt::format("KV tokens within {:.0f}% mean, {:.0f}% worst on {}",
                                100 * band.mean_abs, 100 * band.max_abs, band.validated_on);
  std::vector<std::string> outside;
  if (a.device.id != "h100-sxm") outside.push_back(fmt::format("GPU {}", a.device.id));
  const std::optional<VllmVersion> v = parse_vllm_version(a.vllm_version);
  if (!v || v->major != kNewestValidatedVllm.major || v->minor != kNewestValidatedVllm.minor) {
    outside.push_back(fmt::format("vLLM {}", a.vllm_version));
  }
  const memory::EngineConfig& e = a.engine;
  if (e.data_parallel_size > 1 || e.enable_expert_parallel) outside.push_back("DP/EP");
  if (e.cpu_offload > Bytes(0)) outside.push_back("weight offload");
  if (a.speculative) outside.push_back("speculative decoding");
  if (!outside.empty()) {
    out += fmt::format("; this setting lies outside them ({}), so the band is not a bound here",
                       fmt::join(outside, ", "));
  }
  return out;
}

// Counts the weights of each stage from the checkpoint's safetensors headers when they are at
// hand and describe what the engine loads; sets engine.exact_stage_weights and returns the
// source said in the answer ("config.json" when it falls back, with a note saying why).
std::string exact_weights(const BudgetRequest& req, const model::ResolvedModel& resolved,
                          const model::ModelSpec& spec, memory::EngineConfig& e,
                          std::vector<std::string>& notes) {
  const std::string fallback = "config.json";
  if (resolved.source == model::ModelSource::kZoo) return fallback;
  const std::optional<model::CheckpointTensors> ckpt = model::read_checkpoint_tensors(resolved);
  if (!ckpt || ckpt->tensors.empty()) return fallback;
  std::string why_not;
  const bool requantized = !(req.quantization == "none" || req.quantization.empty() ||
                             req.quantization == spec.checkpoint_quantization);
  if (e.data_parallel_size > 1 || e.enable_expert_parallel) {
    why_not = "data or expert parallelism re-splits the experts";
  } else if (requantized) {
    why_not = fmt::format("--quantization {} re-quantizes the checkpoint at load",
                          req.quantization);
  } else if (spec.checkpoint_quant &&
             spec.checkpoint_quant->method == model::QuantMethod::kBitsAndBytes) {
    why_not = "vLLM rebuilds bitsandbytes quant states at load (a double-quantized absmax "
              "becomes fp32 again, bitsandbytes_loader.dequantize_dq; the JSON quant_state stays "
              "on the host), so the file's bytes are not the device's";
  } else if (spec.checkpoint_quant == std::nullopt && spec.checkpoint_quantization.empty()) {
    // An unquantized checkpoint is loaded in the engine's dtype: the floating type holding
    // most of its bytes must have that width for the file bytes to be the device bytes.
    std::map<std::string, std::int64_t> by_dtype;
    for (const model::SafetensorsTensor& t : ckpt->tensors) {
      if (t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64") {
        by_dtype[t.dtype] += t.num_bytes;
      }
    }
    const auto dominant = std::max_element(by_dtype.begin(), by_dtype.end(), [](const auto& x,
                                                                            const auto& y) {
      return x.second < y.second;
    });
    if (dominant != by_dtype.end() &&
        model::safetensors_dtype_bits(dominant->first) != bits_of(e.dtype)) {
      why_not = fmt::format("the checkpoint is stored as {}, the engine runs {}", dominant->first,
                            to_string(e.dtype));
    }
  }
  if (!why_not.empty()) {
    notes.push_back(fmt::format("weights: counted from config.json, not from the {} "
                                "safetensors headers at hand: {}",
                                ckpt->num_files, why_not));
    return fallback;
  }
  std::vector<Bytes> stages;
  for (int stage = 0; stage < e.pp; ++stage) {
    stages.push_back(model::checkpoint_bytes_on_stage(spec, *ckpt,
                                                      model::Parallelism{e.tp, e.pp}, stage));
  }
  e.exact_stage_weights = std::move(stages);
  return fmt::format("safetensors headers ({} file{})", ckpt->num_files,
                     ckpt->num_files == 1 ? "" : "s");
}

}  // namespace

BudgetAnswer answer_budget(const BudgetRequest& req, const std::filesystem::path& root) {
  BudgetAnswer a;
  a.seed = req.seed;
  model::ResolveOptions resolve;
  resolve.revision = req.revision;
  const model::ResolvedModel resolved =
      model::resolve_model(req.model_id, root / "scenarios" / "models", resolve);
  a.model = model::load_resolved(resolved);
  const std::filesystem::path topo = root / "topologies";
  a.device = io::find_device(req.gpu_id, topo, "hardware.gpu");
  a.engine = resolve_engine(req, a.model, a.device, a.notes, a.enable_chunked_prefill);
  place_on_node(req, a, root);
  a.weights_source = exact_weights(req, resolved, a.model, a.engine, a.notes);
  a.vllm_version = req.vllm_version;
  a.expert_parallel.data_parallel_size = a.engine.data_parallel_size;
  a.expert_parallel.enable_expert_parallel = a.engine.enable_expert_parallel;
  a.expert_parallel.backend = *serving::all2all_backend_from_string(req.all2all_backend);
  a.expert_parallel.expert_load_imbalance = req.expert_load_imbalance;
  if (!req.speculative_config.empty()) {
    serving::SpeculativeConfig sc =
        serving::parse_speculative_config(req.speculative_config, "engine.speculative_config");
    if (req.spec_acceptance_rate.empty()) {
      throw ConfigError("engine.spec_acceptance_rate",
                        "required with engine.speculative_config: the acceptance rate depends "
                        "on the data, give one (\"0.7\") or one per draft position "
                        "(\"0.8,0.6,0.5\"), e.g. from vLLM's spec-decode metrics");
    }
    sc.acceptance_rates = serving::parse_acceptance_rates(
        req.spec_acceptance_rate, sc.num_speculative_tokens, "engine.spec_acceptance_rate");
    a.speculative = make_speculative_draft(sc, a.model, req.model_id, a.engine,
                                           root / "scenarios" / "models", a.notes);
    a.engine.draft = a.speculative->memory;
  } else if (!req.spec_acceptance_rate.empty()) {
    throw ConfigError("engine.spec_acceptance_rate",
                      "ignored without engine.speculative_config (--speculative-config)");
  }
  a.overheads = memory::default_overheads(a.nvls);
  if (!req.calibration.empty()) {
    a.calibration = cost::load_profile_for_device(req.calibration, a.device, "hardware.calibration");
    a.overheads = memory::overheads_from_profile(*a.calibration, a.nvls);
  }
  if (!req.gpu_p2p && (a.engine.tp > 1 || a.engine.data_parallel_size > 1)) {
    // Without peer access vLLM's custom all-reduce is off (vllm/distributed/device_communicators/
    // custom_all_reduce.py: "Custom allreduce is disabled because your platform lacks GPU P2P
    // capability" on one node, "because this process group spans across nodes" across nodes,
    // as the A100 TP 2 logs of tests/validation/vllm_startup_logs.csv print), and NCCL has no
    // P2P or NVLS transport: its SHM transport (one node) keeps the protocol buffers in host
    // shared memory mapped to the GPU (NVIDIA/nccl src/transport/shm.cc, hostMem, with
    // NCCL_SHM_USE_CUDA_MEMCPY off by default), and its network transport without GPUDirect
    // RDMA (across nodes) in pinned host memory (src/transport/net.cc, NCCL_NET_MAP_HOSTMEM),
    // so what non_torch_comm charges for device-resident buffers is not there. NOTE: NCCL's
    // per-communicator device structures (a few MiB) are not charged either, and a cross-node
    // group with GPUDirect RDMA would keep its receive buffers on the device.
    a.overheads.non_torch_comm = Bytes(0);
    a.nvls = false;
    a.notes.push_back("no GPU peer-to-peer access: vLLM's custom all-reduce is off and NCCL "
                      "stages through host memory, so no communicator buffers are charged to "
                      "device memory");
  }
  a.result = memory::compute_budget(a.model, a.engine, a.device, a.overheads);
  check_startup_memory(a.result);
  a.kv_offload = kv_offload_budget(req, a.engine, a.result);
  a.kv_offload_host = kv_offload_host(a, root);
  if (a.engine.lora) {
    a.lora.adapter_bytes = memory::lora_adapter_bytes(a.model, *a.engine.lora);
    a.lora.host_bytes_per_device = a.engine.lora->max_cpu_loras * a.lora.adapter_bytes;
  }
  a.margin = margin_of(a.result);
  a.kv_error_band = kv_error_band(a);
  if (a.result.fits || !req.suggest) return a;
  a.suggestions = budget_suggestions(req, a);
  add_alternatives(req, a, root);
  return a;
}

}  // namespace vramsim::run
