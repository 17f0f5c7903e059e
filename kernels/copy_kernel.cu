// Kernels and launch wrappers for the copy and data-fill measurements (launchers.hpp).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda_check.hpp"
#include "kernels/launchers.hpp"
#include "kernels/random_hash.hpp"

namespace vramsim::kernels {

namespace {

constexpr int kCopyThreads = 256;
constexpr int kUnroll = 4;

// 16-byte loads and stores, four in flight per thread, grid-stride.
__global__ void vector_copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst,
                                   std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void tail_copy_kernel(const unsigned char* src, unsigned char* dst, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void fill_random_bf16_kernel(std::uint16_t* dst, std::size_t n, std::uint64_t seed,
                                        float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = __bfloat16_as_ushort(__float2bfloat16_rn(hash_uniform(seed, i, scale)));
  }
}

}  // namespace

void launch_vector_copy(const void* src, void* dst, std::size_t bytes, int num_sms,
                        cudaStream_t stream) {
  const std::size_t n_vec = bytes / 16;
  const std::size_t tail = bytes % 16;
  if (n_vec > 0) {
    const std::size_t wanted = (n_vec + kCopyThreads - 1) / kCopyThreads;
    const std::size_t cap = static_cast<std::size_t>(num_sms) * 8;
    const unsigned blocks = static_cast<unsigned>(wanted < cap ? wanted : cap);
    vector_copy_kernel<<<blocks, kCopyThreads, 0, stream>>>(static_cast<const int4*>(src),
                                                            static_cast<int4*>(dst), n_vec);
    CUDA_CHECK(cudaGetLastError());
  }
  if (tail > 0) {
    tail_copy_kernel<<<1, 16, 0, stream>>>(static_cast<const unsigned char*>(src) + n_vec * 16,
                                           static_cast<unsigned char*>(dst) + n_vec * 16, tail);
    CUDA_CHECK(cudaGetLastError());
  }
}

void launch_fill_random_bf16(std::uint16_t* dst, std::size_t n, std::uint64_t seed, float scale,
                             cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t wanted = (n + 255) / 256;
  const unsigned blocks = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  fill_random_bf16_kernel<<<blocks, 256, 0, stream>>>(dst, n, seed, scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vramsim::kernels
