#include "sim/memory/lora_memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/model/parallelism.hpp"

namespace vramsim::memory {

std::optional<std::string> lora_unsupported_reason(const model::ModelSpec& spec) {
  if (spec.moe) {
    return "the model has routed experts: vLLM 0.19 also wraps its FusedMoE layers with LoRA "
           "(FusedMoEWithLoRA), whose buffers are not modelled";
  }
  if (spec.mla) return "multi-head latent attention's LoRA layers are not modelled";
  switch (spec.family) {
    case model::ModelFamily::kLlama:
    case model::ModelFamily::kMistral:
    case model::ModelFamily::kQwen2:
    case model::ModelFamily::kQwen3:
    case model::ModelFamily::kGemma:
    case model::ModelFamily::kGemma2:
    case model::ModelFamily::kGranite:
      if (spec.mlp == model::MlpKind::kGated) return std::nullopt;
      return "LoRA is modelled for gated-MLP models (gate_up_proj, down_proj) only";
    case model::ModelFamily::kMixtral:
    case model::ModelFamily::kQwen2Moe:
    case model::ModelFamily::kQwen3Moe:
    case model::ModelFamily::kPhi:
    case model::ModelFamily::kPhi3:
    case model::ModelFamily::kGptNeox:
    case model::ModelFamily::kOpt:
    case model::ModelFamily::kGpt2:
    case model::ModelFamily::kDeepseekV2:
    case model::ModelFamily::kGptOss:
    case model::ModelFamily::kMistral3:
      return fmt::format("LoRA layer shapes are modelled for Llama-style models (separate q/k/v "
                         "and gate/up projections packed as qkv_proj and gate_up_proj: Llama, "
                         "Mistral, Qwen2/3, Gemma, Granite), not {}",
                         spec.architecture);
  }
  VRAMSIM_UNREACHABLE("model family");
}

void validate_lora(const LoraConfig& cfg, const model::ModelSpec& spec, int tp,
                   ValidationReport& report) {
  if (cfg.max_loras < 1) {
    report.error("engine.max_loras", fmt::format("must be >= 1, got {}", cfg.max_loras));
  }
  if (std::find(kMaxLoraRanks.begin(), kMaxLoraRanks.end(), cfg.max_lora_rank) ==
      kMaxLoraRanks.end()) {
    report.error("engine.max_lora_rank",
                 fmt::format("must be one of vLLM's ranks 1, 8, 16, 32, 64, 128, 256, 320, 512 "
                             "(vllm/config/lora.py MaxLoRARanks), got {}",
                             cfg.max_lora_rank));
  }
  if (cfg.max_cpu_loras < cfg.max_loras) {
    report.error("engine.max_cpu_loras",
                 fmt::format("must be >= max_loras ({}), got {} (as vLLM's LoRAConfig checks)",
                             cfg.max_loras, cfg.max_cpu_loras));
  }
  if (cfg.dtype != DType::kBf16 && cfg.dtype != DType::kFp16) {
    report.error("engine.lora_dtype", fmt::format("must be auto, float16 or bfloat16 (vLLM's "
                                                  "LoRADType), got {}",
                                                  to_string(cfg.dtype)));
  }
  if (const std::optional<std::string> why = lora_unsupported_reason(spec)) {
    report.error("engine.enable_lora", *why);
    return;
  }
  if (cfg.fully_sharded && tp > 1) {
    // vLLM's divide() asserts both splits.
    if (cfg.max_lora_rank % tp != 0) {
      report.error("engine.fully_sharded_loras",
                   fmt::format("max_lora_rank {} must be divisible by tp {} (the column "
                               "modules' A is split over the rank)",
                               cfg.max_lora_rank, tp));
    }
    if (spec.hidden_size % tp != 0) {
      report.error("engine.fully_sharded_loras",
                   fmt::format("hidden size {} must be divisible by tp {} (the row modules' B "
                               "is split over the output)",
                               spec.hidden_size, tp));
    }
  }
}

std::array<LoraModule, 4> lora_modules(const model::ModelSpec& spec, int tp,
                                       const LoraConfig& cfg) {
  const std::int64_t r = cfg.max_lora_rank;
  const std::int64_t t = tp;
  const std::int64_t h = spec.hidden_size;
  const std::int64_t q = spec.num_attention_heads / t * spec.head_dim;
  const std::int64_t kv = model::kv_heads_per_device(spec, tp) * spec.head_dim;
  const std::int64_t inter = spec.intermediate_size / t;
  const std::int64_t rank_a_col = cfg.fully_sharded ? r / t : r;
  const std::int64_t out_b_row = cfg.fully_sharded ? h / t : h;
  return {{
      // MergedQKVParallelLinearWithLoRA: three slices, A (rank_a, hidden) each.
      {"qkv_proj", h, 3 * rank_a_col, q + 2 * kv, r},
      // RowParallelLinearWithLoRA: input_size_per_partition.
      {"o_proj", q, r, out_b_row, r},
      // MergedColumnParallelLinearWithLoRA: two slices.
      {"gate_up_proj", h, 2 * rank_a_col, 2 * inter, r},
      {"down_proj", inter, r, out_b_row, r},
  }};
}

LoraLayerElements lora_slot_elements(const model::ModelSpec& spec, int tp, const LoraConfig& cfg) {
  LoraLayerElements e;
  for (const LoraModule& m : lora_modules(spec, tp, cfg)) {
    e.a += m.rank_a * m.input;
    e.b += m.out_b * m.rank;
  }
  return e;
}

Bytes lora_slot_bytes(const model::ModelSpec& spec, int tp, const LoraConfig& cfg,
                      std::int64_t num_layers) {
  const std::int64_t bytes = bits_of(cfg.dtype) / 8;
  return Bytes(cfg.max_loras * lora_slot_elements(spec, tp, cfg).total() * bytes * num_layers);
}

Bytes lora_adapter_bytes(const model::ModelSpec& spec, const LoraConfig& cfg) {
  LoraConfig one = cfg;
  one.fully_sharded = false;
  const std::int64_t bytes = bits_of(cfg.dtype) / 8;
  return Bytes(lora_slot_elements(spec, 1, one).total() * bytes * spec.num_layers);
}

}  // namespace vramsim::memory
