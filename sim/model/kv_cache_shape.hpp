// KV-cache bytes per token and per sequence, per device, layer by layer.
//
// Standard attention (MHA / GQA / MQA) stores a key and a value vector per KV head:
//     bytes per token per layer = 2 * kv_heads_per_device * head_dim * bytes(kv dtype)
// with kv_heads_per_device = max(1, num_kv_heads / tp) (vLLM replicates KV heads when
// tp > num_kv_heads). Llama-3.1-8B, bf16, tp 1: 32 layers * 2 * 8 * 128 * 2 B = 128 KiB.
//
// MLA (DeepSeek-V2) stores one compressed latent plus the shared rotary key per token:
//     bytes per token per layer = (kv_lora_rank + qk_rope_head_dim) * bytes(kv dtype)
// and the cache is NOT split by TP: every rank holds the whole latent (vLLM's MLA backends),
// so DeepSeek-V2-Lite keeps 27 * 576 * 2 B per token on each rank.
//
// Sliding-window layers (Mistral-7B-v0.1: 4096 on every layer; Gemma-2: 4096 on even layers;
// gpt-oss: 128 on the layers layer_types marks) keep at most `window` tokens, so a sequence of
// n tokens costs min(n, window) tokens there. gpt-oss's attention sinks are parameters, not
// cache entries. NOTE: vLLM allocates whole blocks and (for sliding layers) frees blocks that
// fall out of the window lazily; block rounding is the KV manager's business, not this file's.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"

namespace vramsim::model {

struct LayerKv {
  std::int64_t layer = 0;
  Bytes bytes_per_token;             // on one TP rank
  std::int64_t sliding_window = 0;   // 0: the layer keeps every token

  /// Bytes this layer holds for a sequence of `tokens` tokens.
  Bytes bytes_for_tokens(std::int64_t tokens) const;
};

/// The decoder layers of pipeline stage `pp_rank` with their per-token KV bytes on one device.
/// Throws ConfigError when `par` cannot split the model.
std::vector<LayerKv> kv_layers(const ModelSpec& spec, DType kv_dtype, Parallelism par = {},
                               int pp_rank = 0);

/// Per-token KV bytes of the largest device, every layer counted (a sliding layer's per-token
/// cost while the sequence is shorter than its window). Throws ConfigError like kv_layers.
Bytes kv_bytes_per_token(const ModelSpec& spec, DType kv_dtype, Parallelism par = {});

/// KV bytes of one sequence of `tokens` tokens on the largest device, sliding layers holding
/// min(tokens, window). Throws ConfigError like kv_layers.
Bytes kv_bytes_for_tokens(const ModelSpec& spec, DType kv_dtype, Parallelism par,
                          std::int64_t tokens);

}  // namespace vramsim::model
