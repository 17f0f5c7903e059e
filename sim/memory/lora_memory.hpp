// Multi-LoRA serving's memory (vLLM's --enable-lora): the stacked adapter slots vLLM allocates on
// every device at model load, and the host memory of its CPU adapter cache.
//
// vLLM wraps every LoRA-supported linear module of every decoder layer (vllm/lora/layers/
// base_linear.py, column_parallel_linear.py, row_parallel_linear.py) and allocates, for each
// packed slice s of the module, in lora_dtype:
//
//   lora_a_stacked[s]: (max_loras, 1, rank_a, input_size)     rank_a = max_lora_rank
//   lora_b_stacked[s]: (max_loras, 1, out_b, max_lora_rank)
//
//   module        kind     slices   input_size   out_b per slice
//   qkv_proj      column   q, k, v  hidden       q/tp, kv_heads_per_device*head_dim (x2)
//   o_proj        row      1        q/tp         hidden
//   gate_up_proj  column   gate, up hidden       intermediate/tp (x2)
//   down_proj     row      1        inter/tp     hidden
//
// With --fully-sharded-loras a column module's rank_a is max_lora_rank/tp (its shrink output is
// all-gathered) and a row module's out_b is hidden/tp (S-LoRA's split, arXiv:2311.03285).
// The embedding and lm_head are not wrapped for these models in vLLM 0.19 (no embedding
// modules); MoE experts (FusedMoEWithLoRA) and MLA are refused rather than guessed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/dtype.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::memory {

/// The ranks vLLM 0.19 accepts for --max-lora-rank (vllm/config/lora.py, MaxLoRARanks).
inline constexpr std::array<std::int64_t, 9> kMaxLoraRanks = {1, 8, 16, 32, 64, 128, 256, 320,
                                                              512};

/// vLLM's LoRAConfig, resolved.
struct LoraConfig {
  std::int64_t max_loras = 1;       // adapter slots on the device (adapters in one batch)
  std::int64_t max_lora_rank = 16;  // every slot is allocated at this rank
  std::int64_t max_cpu_loras = 1;   // adapters kept in host memory (LRU), >= max_loras
  DType dtype = DType::kBf16;       // lora_dtype ("auto": the model's dtype)
  bool fully_sharded = false;       // --fully-sharded-loras
};

/// One adapter's LoRA matrices in one decoder layer on one device, in elements: A (the shrink,
/// x·A) and B (the expand, ·B) summed over the modules and their slices. A token through the
/// layer costs 2 * (a + b) FLOPs for one adapter.
struct LoraLayerElements {
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::int64_t total() const { return a + b; }
};

/// One LoRA module of a decoder layer on one device, its slices together: the shrink is
/// x[T x input] · A[input x rank_a] and the expand is s[T x rank] · B[rank x out_b] (punica's
/// sgmv/bgmv shrink and expand), so A holds rank_a * input elements and B out_b * rank.
struct LoraModule {
  const char* name = "";      // "qkv_proj", "o_proj", "gate_up_proj", "down_proj"
  std::int64_t input = 0;     // input_size on the device
  std::int64_t rank_a = 0;    // A's rows, every slice together
  std::int64_t out_b = 0;     // B's rows, every slice together
  std::int64_t rank = 0;      // max_lora_rank: B's columns
};

/// The four modules of one decoder layer on one device of a `tp`-way split, in layer order.
std::array<LoraModule, 4> lora_modules(const model::ModelSpec& spec, int tp,
                                       const LoraConfig& cfg);

/// Why vLLM's LoRA layers of `spec` are not modelled, or nullopt when they are.
std::optional<std::string> lora_unsupported_reason(const model::ModelSpec& spec);

/// Problems of `cfg` for `spec` at `tp`, each under its scenario path (engine.max_lora_rank...).
void validate_lora(const LoraConfig& cfg, const model::ModelSpec& spec, int tp,
                   ValidationReport& report);

/// One slot's elements per decoder layer on one device of a `tp`-way split, as vLLM allocates
/// them (rank_a = max_lora_rank/tp under fully_sharded for column modules).
LoraLayerElements lora_slot_elements(const model::ModelSpec& spec, int tp, const LoraConfig& cfg);

/// Device bytes of the stacked slots for `num_layers` decoder layers:
/// max_loras * slot elements * bytes(lora dtype) * num_layers.
Bytes lora_slot_bytes(const model::ModelSpec& spec, int tp, const LoraConfig& cfg,
                      std::int64_t num_layers);

/// One adapter of rank max_lora_rank, unsharded, every decoder layer, in lora_dtype: what each
/// worker holds per adapter in its CPU cache (vLLM loads the whole checkpoint on each worker and
/// slices it when copying into the slots). An upper bound: a real adapter's rank may be lower.
Bytes lora_adapter_bytes(const model::ModelSpec& spec, const LoraConfig& cfg);

}  // namespace vramsim::memory
