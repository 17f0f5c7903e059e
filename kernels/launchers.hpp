// Launch wrappers of the calibration kernels (defined in the .cu files, which hold kernels and
// these wrappers only). C++17, CUDA runtime types only, so host .cpp files compiled by the
// host compiler can call them. Each wrapper checks its launch with CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace vramsim::kernels {

/// Copies `bytes` from `src` to `dst` (device pointers, 16-byte aligned) with 16-byte vector
/// loads and stores, grid-stride, the tail byte by byte.
void launch_vector_copy(const void* src, void* dst, std::size_t bytes, int num_sms,
                        cudaStream_t stream);

/// Fills `n` bf16 values (raw 16-bit) at `dst` with uniform values in [-scale, scale) from a
/// counter-based hash of (seed, index) (random_hash.hpp): the CPU regenerates the same values
/// with random_bf16_value (harness.hpp).
void launch_fill_random_bf16(std::uint16_t* dst, std::size_t n, std::uint64_t seed, float scale,
                             cudaStream_t stream);

/// Paged decode attention, one query token per sequence (vLLM's cache layout):
///   q            [batch][num_q_heads][128] bf16
///   k/v_cache    [num_blocks][block_size][num_kv_heads][128] bf16
///   block_table  [batch][max_blocks_per_seq] int32, context_lens [batch] int32
///   out          [batch][num_q_heads][128] float
/// GQA: num_q_heads / num_kv_heads query heads (at most 8) share a KV head; one thread block
/// per (sequence, KV head) reads that head's K and V once. head_dim is fixed at 128.
void launch_paged_decode_attention(const std::uint16_t* q, const std::uint16_t* k_cache,
                                   const std::uint16_t* v_cache, const std::int32_t* block_table,
                                   const std::int32_t* context_lens, float* out, int batch,
                                   int num_q_heads, int num_kv_heads, int block_size,
                                   int max_blocks_per_seq, float softmax_scale,
                                   cudaStream_t stream);

/// Row-wise causal softmax in place over `rows` rows of `cols` bf16 scores (row r keeps
/// columns 0..r + col_offset, the rest become 0), scores multiplied by `scale` first.
void launch_causal_softmax_bf16(std::uint16_t* scores, int rows, int cols, int col_offset,
                                float scale, cudaStream_t stream);

}  // namespace vramsim::kernels
