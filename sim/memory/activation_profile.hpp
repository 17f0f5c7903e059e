// The activation memory of vLLM's start-up profile run, estimated from the model's shapes.
//
// vLLM (V1 GPUModelRunner.profile_run) runs one dummy forward pass over max_num_batched_tokens
// tokens, then one dummy sampler pass over min(max_num_seqs, max_num_batched_tokens) requests,
// and records PyTorch's peak allocated bytes above the weights ("torch_peak_increase"). In
// inference mode every intermediate is freed as soon as its last reader ran, so the peak is
// the largest set of tensors alive at one moment, not a sum over layers:
//
//   forward, inside one decoder layer (N tokens, widths per TP rank):
//     residual + normed input            2 * N * hidden          (alive across the layer)
//     attention block   qkv output N * (q + 2 kv) + attention output N * q + o_proj output N * h
//     MLP block (gated) gate_up output N * 2I + activation output N * I + down output N * h
//     MoE block         router logits N * E + fused-MoE caches chunk * k * (2I + I + h)
//     peak = residual + normed + max(attention block, MLP block)
//   sampler (fp32 logits of R requests over the vocabulary, vLLM's top-k/top-p path):
//     the bf16 logits (0.5) + fp32 logits (1) + sorted logits (1) + sort indices int64 (2)
//     + top-k/top-p masks (0.5) + softmax of the sorted logits (1) + the re-scattered logits (1)
//     = 7 buffers of R * V * 4 bytes alive at the scatter, the sampler's peak.
//   peak = max(forward peak, hidden states of N tokens + sampler peak on the last PP stage)
//
// NOTE: these counts follow vLLM's model code (vllm/model_executor/models/llama.py,
// layers/fused_moe, v1/sample/ops/topk_topp_sampler.py); a calibration profile replaces them
// with measured peaks.
#pragma once

#include <cstdint>

#include "sim/core/dtype.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::memory {

/// fp32-sized [R, V] buffers alive at the sampler's peak (see the file comment).
inline constexpr double kSamplerLiveLogitBuffers = 7.0;
/// vLLM's fused-MoE kernel processes at most this many tokens at a time
/// (VLLM_FUSED_MOE_CHUNK_SIZE, vllm/envs.py default 32768).
inline constexpr std::int64_t kFusedMoeChunkTokens = 32768;

struct ProfileBatch {
  std::int64_t num_tokens = 0;  // max_num_batched_tokens
  std::int64_t num_reqs = 0;    // min(max_num_seqs, max_num_batched_tokens)
  int tp = 1;
  DType activation_dtype = DType::kBf16;
};

/// Peak bytes alive during the forward pass of `batch.num_tokens` tokens on one TP rank.
Bytes forward_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// Peak bytes of the dummy sampler run (logits and sampling temporaries), on the last PP stage.
Bytes sampler_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// The profile run's activation peak: max(forward, sampler phase) on the last PP stage,
/// the forward peak elsewhere.
Bytes activation_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch,
                            bool last_pp_stage);

}  // namespace vramsim::memory
