// The activation memory of vLLM's start-up profile run, estimated from the model's shapes.
//
// vLLM (V1 GPUModelRunner.profile_run) runs one dummy forward pass over max_num_batched_tokens
// tokens (N), then one dummy sampler pass over R = min(max_num_seqs, max_num_batched_tokens)
// requests, and records PyTorch's peak allocated bytes above the weights ("torch peak memory
// increase"). In inference mode every intermediate is freed as soon as its last reader ran, so
// the peak is the largest set of tensors alive at one moment, not a sum over layers:
//
//   forward, inside one decoder layer (N tokens, widths per TP rank):
//     residual + normed input + the layer's input    3 * N * hidden     (alive across the layer)
//     attention block   qkv output N * (q + 2 kv) + attention output N * q + o_proj output N * h
//     MLP block (gated) gate_up output N * 2I + activation output N * I + down output N * h
//     MoE block         router logits N * E + the fused-MoE workspace (below) + output N * h
//     peak = 3 * N * hidden + max(attention block, MLP block)
//   fused-MoE workspace (vllm/model_executor/layers/fused_moe/modular_kernel.py: workspace13 and
//   workspace2 of TritonExperts.workspace_shapes, taken from the worker's workspace manager, so
//   it stays allocated after the forward), M = min(N, VLLM_FUSED_MOE_CHUNK_SIZE):
//     M * top_k * (max(2I, hidden) + max(I, hidden))
//   sampler phase (vLLM >= 0.17, Triton top-k/top-p, vllm/v1/sample/ops/topk_topp_triton.py;
//   R >= 8 rows take that path), with the forward's hidden states [N, h] and the sampled rows
//   [R, h] still referenced by profile_run:
//     logits from compute_logits, in the model dtype   R * V * (2 B, or 4 B in fp32)
//     fp32 logits (Sampler.forward), masked in place by the Triton kernel     R * V * 4 B
//     probs = softmax(logits) (TopKTopPSampler.forward_native)                 R * V * 4 B
//     q = empty_like(probs) for the exponential race (random_sample)          R * V * 4 B
//       = 3.5 * R * V * 4 B in 16 bits (4 in fp32, as the fp32 run of the validation set
//       logs), plus the kernel's per-program buffer, cached per device:
//     min(next_pow2(min(n_SM, R)), n_SM) * V * 4 B
//     plus kSamplerFixedBytes (fitted, see below) and the MoE workspace when the model has one.
//   older sampler (sort-based top-k/top-p, vLLM <= 0.16, vllm/v1/sample/ops/topk_topp_sampler.py
//   apply_top_k_top_p_pytorch): bf16 logits (0.5) + fp32 logits (1) + sorted logits (1) + sort
//   indices int64 (2) + top-k/top-p masks (0.5) + softmax of the sorted logits (1) + the
//   re-scattered logits (1) = 7 buffers of R * V * 4 B alive at the scatter.
//   peak = max(forward peak, sampler phase) on the last PP stage, the forward peak elsewhere.
//
// NOTE: these counts follow vLLM's model code (vllm/model_executor/models/llama.py,
// layers/fused_moe, v1/sample); a calibration profile replaces them with measured peaks.
#pragma once

#include <cstdint>

#include "sim/core/dtype.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::memory {

/// Which top-k/top-p implementation the dummy sampler run exercises.
enum class SamplerKind {
  kSortTopKTopP,    // torch sort + scatter (vLLM <= 0.16)
  kTritonTopKTopP,  // pivot-based Triton kernel with a per-SM buffer (vLLM 0.17 on)
};

/// fp32-sized [R, V] buffers alive at the sort-based sampler's peak (see the file comment).
inline constexpr double kSortSamplerLiveLogitBuffers = 7.0;
/// fp32 [R, V] buffers alive at the Triton sampler's peak besides the model-dtype logits
/// (see the file comment).
inline constexpr double kTritonSamplerLiveFp32Buffers = 3.0;
/// Bytes of the sampler phase that no buffer above explains (sampling-metadata tensors, the
/// greedy argmax, allocator rounding). Fitted: the logged "torch peak memory increase" of the
/// two fitting runs in tests/validation/vllm_startup_logs.csv (Llama-3.1-8B-Instruct 1.89 GiB,
/// Qwen2.5-7B-Instruct 2.21 GiB; H100, vLLM 0.19.0, both rounded to 0.01 GiB) exceeds the
/// buffers above and the kept hidden states by 45.3 and 44.5 MiB.
inline constexpr std::int64_t kSamplerFixedBytes = 45LL << 20;
/// vLLM's fused-MoE kernel processes at most this many tokens at a time
/// (VLLM_FUSED_MOE_CHUNK_SIZE, vllm/envs.py default 16 * 1024).
inline constexpr std::int64_t kFusedMoeChunkTokens = 16384;
/// The Triton top-k/top-p kernel serves batches of at least this many rows; smaller ones sort
/// (vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: logits.shape[0] >= 8).
inline constexpr std::int64_t kTritonSamplerMinRows = 8;

struct ProfileBatch {
  std::int64_t num_tokens = 0;  // max_num_batched_tokens
  std::int64_t num_reqs = 0;    // min(max_num_seqs, max_num_batched_tokens)
  int tp = 1;
  DType activation_dtype = DType::kBf16;
  /// Streaming multiprocessors (AMD: compute units) of the device; sizes the Triton sampler's
  /// per-program buffer. Must be positive for kTritonTopKTopP.
  int num_sms = 0;
  SamplerKind sampler = SamplerKind::kTritonTopKTopP;
};

/// Peak bytes alive during the forward pass of `batch.num_tokens` tokens on one TP rank.
Bytes forward_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// Bytes of the fused-MoE workspace that stays allocated after the forward (0 without MoE).
Bytes moe_workspace_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// Peak bytes of the dummy sampler run (logits and sampling temporaries), on the last PP stage.
Bytes sampler_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// The buffers a pipeline stage after the first receives the previous stage's output into:
/// hidden states and residual of max_num_batched_tokens tokens (GPUModelRunner keeps them as
/// its persistent intermediate_tensors, allocated in the profile run).
Bytes pp_receive_buffer_bytes(const model::ModelSpec& spec, const ProfileBatch& batch);

/// The profile run's activation peak: max(forward, sampler phase) on the last PP stage,
/// the forward peak elsewhere.
Bytes activation_peak_bytes(const model::ModelSpec& spec, const ProfileBatch& batch,
                            bool last_pp_stage);

}  // namespace vramsim::memory
