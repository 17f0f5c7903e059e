#include "sim/memory/activation_profile.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::memory {

namespace {

// Activations run in 16 bits unless the model runs in fp32 (quantized weights are dequantized
// into bf16/fp16 activations).
std::int64_t activation_bytes(DType d) { return bits_of(d) >= 32 ? 4 : 2; }

std::int64_t per_rank(std::int64_t width, int tp) { return ceil_div(width, tp); }

// Elements alive in the attention block, per token, on one TP rank.
std::int64_t attention_block_width(const model::ModelSpec& s, int tp) {
  if (s.mla) {
    const model::MlaSpec& m = *s.mla;
    const std::int64_t heads = per_rank(s.num_attention_heads, tp);
    const std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    // q, compressed kv + rope key, decompressed k_nope|v, assembled k and v, attention output,
    // o_proj output (prefill path of vllm's MLA: the latent is expanded per head).
    return heads * qk + (m.kv_lora_rank + m.qk_rope_head_dim) +
           heads * (m.qk_nope_head_dim + m.v_head_dim) + heads * qk + heads * m.v_head_dim +
           heads * m.v_head_dim + s.hidden_size;
  }
  const std::int64_t q = per_rank(s.q_width(), tp);
  // vLLM replicates KV heads when tp > num_kv_heads: each rank keeps at least one.
  const std::int64_t kv_heads = std::max<std::int64_t>(1, s.num_kv_heads / tp);
  const std::int64_t kv = kv_heads * s.head_dim;
  return (q + 2 * kv) + q + s.hidden_size;
}

std::int64_t dense_mlp_width(const model::ModelSpec& s, std::int64_t inner, int tp) {
  const std::int64_t i = per_rank(inner, tp);
  switch (s.mlp) {
    case model::MlpKind::kGated: return 2 * i + i + s.hidden_size;
    case model::MlpKind::kPlain: return i + i + s.hidden_size;
  }
  VRAMSIM_UNREACHABLE("invalid MlpKind");
}

bool has_moe_layer(const model::ModelSpec& s) {
  return std::any_of(s.layers.begin(), s.layers.end(),
                     [](const model::LayerSpec& l) { return l.moe; });
}

// Elements of the fused-MoE workspace (workspace13 + workspace2) for n tokens.
std::int64_t moe_workspace_elements(const model::ModelSpec& s, std::int64_t n, int tp) {
  const model::MoeSpec& m = *s.moe;
  const std::int64_t chunk = std::min(n, kFusedMoeChunkTokens);
  const std::int64_t i = per_rank(m.expert_intermediate_size, tp);
  const std::int64_t w13 = std::max(2 * i, s.hidden_size);
  const std::int64_t w2 = std::max(i, s.hidden_size);
  return chunk * m.num_experts_per_tok * (w13 + w2);
}

// Elements alive in the MLP block for n tokens.
std::int64_t mlp_block_elements(const model::ModelSpec& s, std::int64_t n, int tp, bool moe) {
  if (!moe) return n * dense_mlp_width(s, s.intermediate_size, tp);
  const model::MoeSpec& m = *s.moe;
  const std::int64_t router = n * m.num_experts;
  const std::int64_t shared =
      m.shared_intermediate_size > 0 ? n * dense_mlp_width(s, m.shared_intermediate_size, tp) : 0;
  // The shared expert's output is kept while the routed experts run; the routed output [n, h]
  // is written beside the workspace.
  return router + moe_workspace_elements(s, n, tp) + shared + n * s.hidden_size;
}

// Rows of the Triton sampler's cached per-program buffer (apply_top_k_top_p_triton:
// NUM_PROGRAMS = min(n_SM, R), allocated as min(next_power_of_2(NUM_PROGRAMS), n_SM) rows).
std::int64_t triton_buffer_rows(std::int64_t rows, int num_sms) {
  const std::int64_t programs = std::min<std::int64_t>(num_sms, rows);
  std::int64_t pow2 = 1;
  while (pow2 < programs) pow2 *= 2;
  return std::min<std::int64_t>(pow2, num_sms);
}

}  // namespace

Bytes forward_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch) {
  VRAMSIM_CHECK(batch.num_tokens > 0 && batch.tp > 0, "profile batch needs tokens and tp");
  const std::int64_t n = batch.num_tokens;
  const std::int64_t bytes_per = activation_bytes(batch.activation_dtype);
  // The residual, the normed input and the layer's input buffer, alive across the layer.
  const std::int64_t base = 3 * n * spec.hidden_size;
  std::int64_t worst_block = n * attention_block_width(spec, batch.tp);
  bool has_dense = false;
  bool has_moe = false;
  for (const model::LayerSpec& l : spec.layers) (l.moe ? has_moe : has_dense) = true;
  if (has_dense) worst_block = std::max(worst_block, mlp_block_elements(spec, n, batch.tp, false));
  if (has_moe) worst_block = std::max(worst_block, mlp_block_elements(spec, n, batch.tp, true));
  return Bytes((base + worst_block) * bytes_per);
}

Bytes moe_workspace_bytes(const model::ModelSpec& spec, const ProfileBatch& batch) {
  if (!spec.moe || !has_moe_layer(spec)) return Bytes(0);
  return Bytes(moe_workspace_elements(spec, batch.num_tokens, batch.tp) *
               activation_bytes(batch.activation_dtype));
}

std::int64_t sort_bytes_per_element(std::int64_t rows) {
  // Outputs: sorted fp32 values and int64 indices.
  constexpr std::int64_t kOutputs = 4 + 8;
  // CUB's alternate key (fp32) and value buffers of a non-DoubleBuffer SortPairs.
  if (rows >= 128) return kOutputs + 8 + (4 + 8);    // int64 source indices + CUB (int64)
  if (rows >= 2) return kOutputs + 8 + 8 + 4 + (4 + 8);  // int2 x 2, keys out + CUB (int2)
  return kOutputs + (4 + 8);  // one segment: CUB only (its [V] source indices are negligible)
}

Bytes sampler_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch) {
  const std::int64_t elements = batch.num_reqs * spec.vocab_size;
  const Bytes model_dtype_logits(elements * activation_bytes(batch.activation_dtype));
  const Bytes fp32_logits(elements * 4);
  const Bytes fixed(kSamplerFixedBytes);
  // Inside torch.sort (see the file comment).
  const Bytes sort_peak = model_dtype_logits + fp32_logits +
                          Bytes(elements * sort_bytes_per_element(batch.num_reqs)) + fixed;
  switch (batch.sampler) {
    case SamplerKind::kSortTopKTopP: return sort_peak;
    case SamplerKind::kFlashInferTopKTopP:
      // fp32 logits, masked_logits and probs (see the file comment).
      return model_dtype_logits + 3 * fp32_logits + fixed;
    case SamplerKind::kTritonTopKTopP: {
      if (batch.num_reqs < kTritonSamplerMinRows) return sort_peak;
      VRAMSIM_CHECK(batch.num_sms > 0, "the Triton sampler needs the device's SM count");
      const Bytes buffer(triton_buffer_rows(batch.num_reqs, batch.num_sms) * spec.vocab_size * 4);
      return model_dtype_logits +
             round_to_bytes(kTritonSamplerLiveFp32Buffers *
                            static_cast<double>(fp32_logits.count())) +
             buffer + fixed;
    }
  }
  VRAMSIM_UNREACHABLE("invalid SamplerKind");
}

Bytes pp_receive_buffer_bytes(const model::ModelSpec& spec, const ProfileBatch& batch) {
  return Bytes(2 * batch.num_tokens * spec.hidden_size * activation_bytes(batch.activation_dtype));
}

Bytes activation_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch,
                            bool last_pp_stage) {
  const Bytes forward = forward_peak_bytes(spec, batch);
  if (!last_pp_stage) return forward;
  const std::int64_t bytes_per = activation_bytes(batch.activation_dtype);
  // profile_run keeps the forward's hidden states [N, h] and the sampled rows [R, h].
  const Bytes hidden((batch.num_tokens + batch.num_reqs) * spec.hidden_size * bytes_per);
  return max(forward, hidden + moe_workspace_bytes(spec, batch) + sampler_peak_bytes(spec, batch));
}

}  // namespace vramsim::memory
