// Forward FLOPs of a transformer per token, per layer, and per prefill chunk or decode step.
//
// Formulas (one multiply-add = 2 FLOPs; whole model, before any TP split):
//   linear      2 * (active matmul weights): q/k/v/o, MLP or the top-k routed + shared experts,
//               routers, MLA projections. The "2N" of Kaplan et al. 2020 (arXiv:2001.08361,
//               sec. 2.1) and Chinchilla's 6N for training = 2N forward + 4N backward
//               (Hoffmann et al. 2022, arXiv:2203.15556). Embedding lookups cost nothing.
//   attention   scores QK^T plus the weighted sum over values, for each attended token:
//               standard  2 * heads * head_dim (QK^T) + 2 * heads * head_dim (AV)
//                         = 4 * heads * head_dim per attended token (Korthikanti et al. 2022,
//                         arXiv:2205.05198, sec. 4: the 4*b*s^2*h term per layer, causal half)
//               MLA prefill (latent decompressed by kv_b_proj, as vLLM's prefill path):
//                         2 * heads * (qk_nope + qk_rope) + 2 * heads * v_head_dim
//               MLA decode (weights absorbed, attention over the latent, vLLM's decode path):
//                         2 * heads * (kv_lora + qk_rope) + 2 * heads * kv_lora
//               The token at 0-based position p attends p + 1 tokens (causal, itself
//               included), at most `window` on a sliding-window layer.
//   lm_head     2 * embed_dim * vocab per token whose logits are computed (vLLM computes them
//               only for the last prompt token of a prefill; training computes all).
// Norms, activations, softmax, rotary embeddings and biases are ignored (< 1% of the total).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model {

/// Which attention kernel form a token goes through (only MLA models differ).
enum class ForwardMode { kPrefill, kDecode };

struct LayerFlops {
  std::int64_t layer = 0;
  Flops linear;
  Flops attention;
};

struct TokenFlops {
  Flops linear;     // every decoder layer's matmuls (and OPT's project_in/out)
  Flops attention;  // every decoder layer's score and value products
  Flops lm_head;
  Flops total() const { return linear + attention + lm_head; }
};

/// Per-layer FLOPs of the token at 0-based `position` (it attends position + 1 tokens).
std::vector<LayerFlops> layer_flops(const ModelSpec& spec, std::int64_t position,
                                    ForwardMode mode = ForwardMode::kPrefill);

/// Whole-model FLOPs of the token at 0-based `position`, logits included.
TokenFlops flops_per_token(const ModelSpec& spec, std::int64_t position,
                           ForwardMode mode = ForwardMode::kPrefill);

/// A prefill chunk of `num_tokens` new tokens after `num_cached` tokens already in the KV cache
/// (chunked prefill or a prefix-cache hit). Logits for the last token only unless
/// `all_logits` (training, or prompt logprobs).
Flops prefill_flops(const ModelSpec& spec, std::int64_t num_tokens, std::int64_t num_cached = 0,
                    bool all_logits = false);

/// One decode step of one sequence whose context, the new token included, is `context_len`.
Flops decode_flops(const ModelSpec& spec, std::int64_t context_len);

/// Attention FLOPs of one layer per attended token (see the table above).
double attention_flops_per_attended_token(const ModelSpec& spec, ForwardMode mode);

}  // namespace vramsim::model
