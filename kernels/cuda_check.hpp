// CUDA_CHECK / CUBLAS_CHECK / NCCL_CHECK: every return code of the CUDA runtime, cuBLAS(Lt)
// and NCCL is checked, and a failure throws CudaError holding the expression, the library's
// error string, file and line (the nccl-tests macros, but exception-based so that RAII frees
// device buffers on the way out).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#if VRAMSIM_HAVE_NCCL
#include <nccl.h>
#endif

namespace vramsim::kernels {

class CudaError : public std::runtime_error {
 public:
  CudaError(const char* library, const char* expr, const std::string& error, const char* file,
            int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + library +
                           " error '" + error + "' in " + expr) {}
};

inline void cuda_check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) throw CudaError("CUDA", expr, cudaGetErrorString(e), file, line);
}

inline void cublas_check(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw CudaError("cuBLAS", expr, cublasGetStatusString(s), file, line);
  }
}

#if VRAMSIM_HAVE_NCCL
inline void nccl_check(ncclResult_t r, const char* expr, const char* file, int line) {
  if (r != ncclSuccess) throw CudaError("NCCL", expr, ncclGetErrorString(r), file, line);
}
#endif

}  // namespace vramsim::kernels

#define CUDA_CHECK(expr) ::vramsim::kernels::cuda_check((expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::vramsim::kernels::cublas_check((expr), #expr, __FILE__, __LINE__)
#if VRAMSIM_HAVE_NCCL
#define NCCL_CHECK(expr) ::vramsim::kernels::nccl_check((expr), #expr, __FILE__, __LINE__)
#endif
