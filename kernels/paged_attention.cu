// The paged-attention decode kernel (launchers.hpp) and the causal softmax of the unfused
// prefill measurement. Kernels and launch wrappers only.
//
// Decode: one thread block per (sequence, KV head), 8 warps. Each half-warp takes one token
// at a time: 16 lanes x 8 bf16 (one 16-byte load each) cover head_dim 128 of K, then of V.
// For each of the G query heads sharing the KV head, the lane's partial dot product is summed
// over the half-warp (4 xor-shuffles) and folded into an online softmax (running max m, sum l,
// accumulator of 8 V elements per lane). The two halves of a warp, then the 8 warps, are
// merged at the end through shared memory:
//
//   tokens:  t = 16 w + 2 i + h   (w: warp 0..7, h: half 0..1, i: iteration)
//   K row of token t, KV head kvh, at ((block_table[t / B] * B + t % B) * H_kv + kvh) * 128
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cfloat>

#include "kernels/cuda_check.hpp"
#include "kernels/launchers.hpp"

namespace vramsim::kernels {

namespace {

constexpr int kHeadDim = 128;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTokensPerIteration = kWarps * 2;

__device__ inline void unpack_bf16x8(const uint4& raw, float* out) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

template <int G>
__global__ void __launch_bounds__(kThreads)
    paged_decode_kernel(const std::uint16_t* __restrict__ q,
                        const std::uint16_t* __restrict__ k_cache,
                        const std::uint16_t* __restrict__ v_cache,
                        const std::int32_t* __restrict__ block_table,
                        const std::int32_t* __restrict__ context_lens, float* __restrict__ out,
                        int num_q_heads, int num_kv_heads, int block_size,
                        int max_blocks_per_seq, float scale) {
  __shared__ float s_m[kWarps][G];
  __shared__ float s_l[kWarps][G];
  __shared__ float s_acc[kWarps][G][kHeadDim];

  const int seq = blockIdx.x;
  const int kvh = blockIdx.y;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int half = lane / 16;
  const int hl = lane % 16;
  const int context = context_lens[seq];
  const std::int32_t* table = block_table + static_cast<std::size_t>(seq) * max_blocks_per_seq;

  float qv[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const std::size_t at =
        (static_cast<std::size_t>(seq) * num_q_heads + kvh * G + g) * kHeadDim + hl * 8;
    unpack_bf16x8(*reinterpret_cast<const uint4*>(q + at), qv[g]);
#pragma unroll
    for (int i = 0; i < 8; ++i) qv[g][i] *= scale;
  }
  float m[G], l[G], acc[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -FLT_MAX;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] = 0.f;
  }

  for (int t0 = warp * 2; t0 < context; t0 += kTokensPerIteration) {
    const int t = t0 + half;
    const bool valid = t < context;
    float kf[8], vf[8];
    if (valid) {
      const std::size_t row =
          (static_cast<std::size_t>(table[t / block_size]) * block_size + t % block_size) *
              num_kv_heads + kvh;
      const std::size_t at = row * kHeadDim + hl * 8;
      unpack_bf16x8(*reinterpret_cast<const uint4*>(k_cache + at), kf);
      unpack_bf16x8(*reinterpret_cast<const uint4*>(v_cache + at), vf);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) kf[i] = vf[i] = 0.f;
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float s = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i) s += qv[g][i] * kf[i];
#pragma unroll
      for (int o = 8; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (valid) {
        const float m_new = fmaxf(m[g], s);
        const float corr = __expf(m[g] - m_new);
        const float p = __expf(s - m_new);
        l[g] = l[g] * corr + p;
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[g][i] = acc[g][i] * corr + p * vf[i];
        m[g] = m_new;
      }
    }
  }

  // Merge the two halves of the warp (lane and lane ^ 16 hold the same 8 elements).
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const float m_other = __shfl_xor_sync(0xffffffffu, m[g], 16);
    const float l_other = __shfl_xor_sync(0xffffffffu, l[g], 16);
    const float m_new = fmaxf(m[g], m_other);
    const float c_self = l[g] > 0.f ? __expf(m[g] - m_new) : 0.f;
    const float c_other = l_other > 0.f ? __expf(m_other - m_new) : 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float a_other = __shfl_xor_sync(0xffffffffu, acc[g][i], 16);
      acc[g][i] = acc[g][i] * c_self + a_other * c_other;
    }
    l[g] = l[g] * c_self + l_other * c_other;
    m[g] = m_new;
  }
  if (half == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (hl == 0) {
        s_m[warp][g] = m[g];
        s_l[warp][g] = l[g];
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) s_acc[warp][g][hl * 8 + i] = acc[g][i];
    }
  }
  __syncthreads();

  // Merge the warps: thread x writes elements x, x + 256, ... of the G x 128 outputs.
  for (int e = threadIdx.x; e < G * kHeadDim; e += kThreads) {
    const int g = e / kHeadDim;
    const int d = e % kHeadDim;
    float m_all = -FLT_MAX;
    for (int w = 0; w < kWarps; ++w) {
      if (s_l[w][g] > 0.f) m_all = fmaxf(m_all, s_m[w][g]);
    }
    float l_all = 0.f, o = 0.f;
    for (int w = 0; w < kWarps; ++w) {
      if (s_l[w][g] > 0.f) {
        const float c = __expf(s_m[w][g] - m_all);
        l_all += s_l[w][g] * c;
        o += s_acc[w][g][d] * c;
      }
    }
    out[(static_cast<std::size_t>(seq) * num_q_heads + kvh * G + g) * kHeadDim + d] =
        l_all > 0.f ? o / l_all : 0.f;
  }
}

// One block per row: scale, mask j > r + col_offset, softmax, write back as bf16.
__global__ void causal_softmax_kernel(std::uint16_t* scores, int cols, int col_offset,
                                      float scale) {
  __shared__ float s_red[32];
  const int row = blockIdx.x;
  const int last = min(cols - 1, row + col_offset);
  __nv_bfloat16* x = reinterpret_cast<__nv_bfloat16*>(scores) + static_cast<std::size_t>(row) * cols;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;

  float mx = -FLT_MAX;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) mx = fmaxf(mx, __bfloat162float(x[j]) * scale);
  for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  if (lane == 0) s_red[warp] = mx;
  __syncthreads();
  mx = -FLT_MAX;
  for (int w = 0; w < warps; ++w) mx = fmaxf(mx, s_red[w]);
  __syncthreads();

  float sum = 0.f;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) sum += __expf(__bfloat162float(x[j]) * scale - mx);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) s_red[warp] = sum;
  __syncthreads();
  sum = 0.f;
  for (int w = 0; w < warps; ++w) sum += s_red[w];
  const float inv = 1.f / sum;

  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float p = j <= last ? __expf(__bfloat162float(x[j]) * scale - mx) * inv : 0.f;
    x[j] = __float2bfloat16_rn(p);
  }
}

template <int G>
void launch_group(const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                  const std::int32_t* table, const std::int32_t* lens, float* out, int batch,
                  int num_q_heads, int num_kv_heads, int block_size, int max_blocks,
                  float scale, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(batch), static_cast<unsigned>(num_kv_heads));
  paged_decode_kernel<G><<<grid, kThreads, 0, stream>>>(q, k, v, table, lens, out, num_q_heads,
                                                        num_kv_heads, block_size, max_blocks,
                                                        scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_paged_decode_attention(const std::uint16_t* q, const std::uint16_t* k_cache,
                                   const std::uint16_t* v_cache, const std::int32_t* block_table,
                                   const std::int32_t* context_lens, float* out, int batch,
                                   int num_q_heads, int num_kv_heads, int block_size,
                                   int max_blocks_per_seq, float softmax_scale,
                                   cudaStream_t stream) {
  if (num_kv_heads <= 0 || num_q_heads % num_kv_heads != 0) {
    throw std::invalid_argument("paged decode: query heads must be a multiple of KV heads");
  }
  switch (num_q_heads / num_kv_heads) {
    case 1: return launch_group<1>(q, k_cache, v_cache, block_table, context_lens, out, batch,
                                   num_q_heads, num_kv_heads, block_size, max_blocks_per_seq,
                                   softmax_scale, stream);
    case 2: return launch_group<2>(q, k_cache, v_cache, block_table, context_lens, out, batch,
                                   num_q_heads, num_kv_heads, block_size, max_blocks_per_seq,
                                   softmax_scale, stream);
    case 4: return launch_group<4>(q, k_cache, v_cache, block_table, context_lens, out, batch,
                                   num_q_heads, num_kv_heads, block_size, max_blocks_per_seq,
                                   softmax_scale, stream);
    case 8: return launch_group<8>(q, k_cache, v_cache, block_table, context_lens, out, batch,
                                   num_q_heads, num_kv_heads, block_size, max_blocks_per_seq,
                                   softmax_scale, stream);
    default: throw std::invalid_argument("paged decode: query heads per KV head must be 1, 2, 4 or 8");
  }
}

void launch_causal_softmax_bf16(std::uint16_t* scores, int rows, int cols, int col_offset,
                                float scale, cudaStream_t stream) {
  causal_softmax_kernel<<<static_cast<unsigned>(rows), 256, 0, stream>>>(scores, cols, col_offset,
                                                                          scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vramsim::kernels
