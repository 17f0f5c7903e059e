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
//   older sampler (sort-based top-k/top-p, vLLM <= 0.16, and batches under 8 rows after;
//   apply_top_k_top_p_pytorch in vllm/v1/sample/ops/topk_topp_sampler.py sorts the fp32 logits,
//   masks the sorted copy and scatters it back in place): its peak is inside torch.sort of the
//   [R, V] fp32 logits. PyTorch's stable CUDA sort (aten/src/ATen/native/cuda/SortStable.cu,
//   pytorch/pytorch) writes the sorted values (4 B) and int64 indices (8 B) and, for R >= 128
//   rows (segmented_sort_pairs), fills int64 source indices (8 B) and calls CUB's
//   DeviceSegmentedRadixSort::SortPairs through at::cuda::cub::segmented_sort_pairs
//   (ATen/cuda/cub.cuh), whose non-DoubleBuffer form allocates alternate key (4 B) and value
//   (8 B) buffers ("~2N auxiliary storage"). Alive at once, per [R, V] element:
//     model-dtype logits (2 B) + fp32 logits (4) + values (4) + indices (8) + source indices (8)
//     + CUB alternates (4 + 8) = 38 B in 16 bits, 9.5 fp32 buffers,
//   plus kSamplerFixedBytes. 2-127 rows sort segments by one full sort
//   (segmented_sort_pairs_by_full_sort: two int2 index/segment buffers 8 + 8, the sorted keys it
//   allocates 4, CUB alternates 4 + 8); one row sorts alone (CUB alternates 4 + 8). The masking,
//   softmax and scatter that follow hold less (6 buffers, then 3.5 after the return).
//   FlashInfer sampler (vLLM's V1 default where FlashInfer is installed, vllm-project/vllm
//   PR #11394, until PR #26859 turned it off by default, October 2025): TopKTopPSampler
//   .forward_cuda calls flashinfer.sampling.top_k_top_p_sampling_from_logits, whose default
//   "top_k_first" order builds masked_logits = top_k_mask_logits(logits) and probs =
//   softmax(masked_logits), both fp32 [R, V] (flashinfer/sampling.py), beside the model-dtype and
//   fp32 logits: model-dtype logits + 3 fp32 buffers, plus kSamplerFixedBytes.
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
  kSortTopKTopP,       // torch sort + scatter (vLLM <= 0.16 without FlashInfer)
  kTritonTopKTopP,     // pivot-based Triton kernel with a per-SM buffer (vLLM 0.17 on)
  kFlashInferTopKTopP, // FlashInfer's top-k mask + softmax + top-p kernel (vLLM 0.9-0.11.0)
};

/// Bytes per [R, V] element that torch.sort of the fp32 logits holds beyond its input: sorted
/// values and int64 indices, then its temporaries by PyTorch's choice of path for R rows (see
/// the file comment; aten/src/ATen/native/cuda/SortStable.cu do_launch_stable_sort_kernel).
std::int64_t sort_bytes_per_element(std::int64_t rows);
/// fp32 [R, V] buffers alive at the Triton sampler's peak besides the model-dtype logits
/// (see the file comment).
inline constexpr double kTritonSamplerLiveFp32Buffers = 3.0;
/// Bytes of the sampler phase that no buffer above explains (sampling-metadata tensors, the
/// greedy argmax, allocator rounding); charged to every sampler path, since each runs the same
/// metadata and greedy argmax. Fitted: the logged "torch peak memory increase" of the
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
