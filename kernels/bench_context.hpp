// What every measurement of vramsim-calibrate receives: the options, the device, a stream,
// the cuBLAS handles with their workspace, and the log. One descriptor per measurement
// (nccl-tests' testColl table): a name, what it measures, and the function that runs it and
// appends its records to the profile.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/harness.hpp"
#include "sim/hardware/calibration_record.hpp"

namespace vramsim::kernels {

struct BenchContext {
  const HarnessOptions& options;
  int device = 0;
  int num_sms = 0;
  int cc_major = 0;
  int cc_minor = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  cublasHandle_t blas = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  std::ostream& log;
};

struct Measurement {
  std::string name;         // "copy", "gemm", ... (--only)
  std::string description;
  std::function<void(BenchContext&, calibration::CalibrationProfile&)> run;
};

/// The cuBLAS(Lt) workspace every GEMM gets: 32 MiB, NVIDIA's recommendation for Hopper
/// (cuBLAS documentation, "cublasSetWorkspace": 32 MiB on sm_90).
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

/// Measures the CUDA context, cuBLAS handle, and allocation granularity into profile.memory.
/// Must run before anything else allocates on the device (main calls it first).
void measure_memory(int device, calibration::CalibrationProfile& profile, std::ostream& log);

void run_copy_bench(BenchContext& ctx, calibration::CalibrationProfile& profile);
void run_gemm_bench(BenchContext& ctx, calibration::CalibrationProfile& profile);
void run_decode_attention_bench(BenchContext& ctx, calibration::CalibrationProfile& profile);
void run_prefill_attention_bench(BenchContext& ctx, calibration::CalibrationProfile& profile);
/// Collectives over all visible GPUs (and one), or over MPI ranks with --mpi; also fills
/// profile.memory's communicator fields. Records nothing (and says so) without NCCL.
void run_collective_bench(BenchContext& ctx, calibration::CalibrationProfile& profile);

/// The measurements in the order they run.
std::vector<Measurement> all_measurements();

}  // namespace vramsim::kernels
