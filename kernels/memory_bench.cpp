// Memory the runtime takes: the CUDA context (total - free right after cudaFree(0), which
// assumes no other process uses the device), the cuBLAS/cuBLASLt handles (free memory before
// and after creating them and running one small GEMM, which loads their kernels), and the
// driver's minimum allocation granularity (cuMemGetAllocationGranularity) together with what
// one 1-byte cudaMalloc costs in free memory.
#include <cuda.h>
#include <fmt/format.h>

#include <cstdint>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"

namespace vramsim::kernels {

namespace {

std::int64_t free_bytes() {
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<std::int64_t>(free);
}

}  // namespace

void measure_memory(int device, calibration::CalibrationProfile& profile, std::ostream& log) {
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));  // creates the primary context
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  calibration::MemoryRecord& m = profile.memory;
  m.total_bytes = static_cast<std::int64_t>(total);
  m.free_bytes = static_cast<std::int64_t>(free);
  m.cuda_context_bytes = static_cast<std::int64_t>(total - free);

  const std::int64_t before_blas = free_bytes();
  {
    cublasHandle_t blas = nullptr;
    cublasLtHandle_t lt = nullptr;
    CUBLAS_CHECK(cublasCreate(&blas));
    CUBLAS_CHECK(cublasLtCreate(&lt));
    DeviceBuffer a(64 * 64 * 4), c(64 * 64 * 4);
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a.as<float>(), 64,
                             a.as<float>(), 64, &zero, c.as<float>(), 64));
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::int64_t after = free_bytes() + static_cast<std::int64_t>(2 * 64 * 64 * 4);
    m.cublas_handle_bytes = before_blas > after ? before_blas - after : 0;
    CUBLAS_CHECK(cublasLtDestroy(lt));
    CUBLAS_CHECK(cublasDestroy(blas));
  }
  m.cublas_workspace_bytes = static_cast<std::int64_t>(kCublasWorkspaceBytes);

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  // The driver API through the runtime's entry-point query, so the program does not link
  // libcuda (and starts, to say "no device", on a machine without a driver).
  using GranularityFn = CUresult (*)(std::size_t*, const CUmemAllocationProp*,
                                     CUmemAllocationGranularity_flags);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &fn, 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw std::runtime_error("cuMemGetAllocationGranularity is not available from the driver");
  }
  std::size_t granularity = 0;
  const CUresult r = reinterpret_cast<GranularityFn>(fn)(&granularity, &prop,
                                                         CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuMemGetAllocationGranularity failed");
  m.allocation_granularity_bytes = static_cast<std::int64_t>(granularity);
  const std::int64_t before_alloc = free_bytes();
  void* one_byte = nullptr;
  CUDA_CHECK(cudaMalloc(&one_byte, 1));
  const std::int64_t one_byte_cost = before_alloc - free_bytes();
  CUDA_CHECK(cudaFree(one_byte));

  log << fmt::format("memory: total {} B, free {} B, context {} B, cuBLAS handles {} B, "
                     "granularity {} B (a 1-byte cudaMalloc took {} B of free memory)\n",
                     m.total_bytes, m.free_bytes, m.cuda_context_bytes, m.cublas_handle_bytes,
                     m.allocation_granularity_bytes, one_byte_cost);
}

}  // namespace vramsim::kernels
