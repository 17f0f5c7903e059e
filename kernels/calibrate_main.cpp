// vramsim-calibrate: measures the local GPU(s) into a calibration profile (JSON) that the
// simulator loads (sim/hardware/calibration_profile.hpp). See kernels/README.md.
//
//   vramsim-calibrate --device-id h200 --out h200.json [--quick] [--only gemm,copy] [--mpi]
//
// Exit codes: 0 success, 2 bad arguments, 1 a CUDA/cuBLAS/NCCL failure (the message names the
// call, file and line), 77 with --check-device when no CUDA device exists (ctest's skip code).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "kernels/harness.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/calibration_profile.hpp"

#if VRAMSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace vramsim::kernels {

std::vector<Measurement> all_measurements() {
  return {
      {"copy", "device and host copy bandwidth", run_copy_bench},
      {"gemm", "cuBLASLt matrix products at the zoo's shapes", run_gemm_bench},
      {"decode-attention", "paged decode attention over batch x context",
       run_decode_attention_bench},
      {"prefill-attention", "causal prefill attention over sequence length",
       run_prefill_attention_bench},
      {"collectives", "NCCL collectives over message sizes", run_collective_bench},
  };
}

namespace {

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

void fill_identity(calibration::CalibrationProfile& p, const HarnessOptions& o, int device,
                   const cudaDeviceProp& prop, int num_devices) {
  p.device_id = o.device_id;
  p.identity.name = prop.name;
  p.identity.model = fmt::format("{} sm_{}{} {} MiB {} SMs", prop.name, prop.major, prop.minor,
                                 prop.totalGlobalMem >> 20, prop.multiProcessorCount);
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  p.identity.driver_version = o.driver_version.empty()
                                  ? fmt::format("CUDA driver API {}", version_string(driver))
                                  : o.driver_version;
  p.identity.cuda_runtime_version = version_string(runtime);
#if VRAMSIM_HAVE_NCCL
  int nccl = 0;
  NCCL_CHECK(ncclGetVersion(&nccl));
  p.identity.nccl_version =
      fmt::format("{}.{}.{}", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
#endif
  p.identity.date = utc_now_iso8601();
  p.identity.command = o.command;
  p.identity.num_devices = num_devices;
  p.note = fmt::format("measured by vramsim-calibrate on device {}{}", device,
                       o.quick ? " (--quick: small grids, a smoke test)" : "");
}

bool selected(const HarnessOptions& o, const std::string& name) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
}

int run(const HarnessOptions& o) {
  int num_devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&num_devices);
  if (e != cudaSuccess || num_devices == 0) {
    std::fprintf(stderr, "vramsim-calibrate: no CUDA device (%s)\n",
                 e == cudaSuccess ? "none visible" : cudaGetErrorString(e));
    return 77;
  }
  if (o.check_device) return 0;
  for (const std::string& name : o.only) {
    const auto all = all_measurements();
    if (name != "memory" && std::none_of(all.begin(), all.end(),
                                         [&](const Measurement& m) { return m.name == name; })) {
      throw std::invalid_argument(fmt::format("--only: unknown measurement '{}'", name));
    }
  }
  calibration::CalibrationProfile profile;
  std::ostream& log = std::cout;
  if (selected(o, "memory") && !o.mpi) measure_memory(o.device, profile, log);
  CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  fill_identity(profile, o, o.device, prop, num_devices);
  log << fmt::format("device {}: {}; {}\n", o.device, profile.identity.model, o.command);

  Stream stream;
  cublasLtHandle_t lt = nullptr;
  cublasHandle_t blas = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  CUBLAS_CHECK(cublasCreate(&blas));
  DeviceBuffer workspace(kCublasWorkspaceBytes);
  BenchContext ctx{o,         o.device, prop.multiProcessorCount, prop.major, prop.minor,
                   stream.get(), lt,    blas, workspace.get(), kCublasWorkspaceBytes, log};
  int mpi_rank = 0;
#if VRAMSIM_HAVE_MPI
  if (o.mpi) MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
#endif
  for (const Measurement& m : all_measurements()) {
    if (!selected(o, m.name)) continue;
    // With --mpi every rank takes part in the collectives; the single-GPU measurements run on
    // rank 0 only (use --only collectives to skip them).
    if (mpi_rank != 0 && m.name != "collectives") continue;
    log << "== " << m.name << ": " << m.description << "\n";
    m.run(ctx, profile);
  }
  CUBLAS_CHECK(cublasDestroy(blas));
  CUBLAS_CHECK(cublasLtDestroy(lt));

  if (mpi_rank != 0) return 0;  // rank 0 writes the profile
  ValidationReport report;
  calibration::validate(profile, report);
  if (!report.ok()) log << "warning: the profile fails validation:\n" << report.format() << "\n";
  calibration::save_calibration_profile(profile, o.out);
  log << "wrote " << o.out << "\n";
  return 0;
}

}  // namespace

}  // namespace vramsim::kernels

int main(int argc, char** argv) {
  using namespace vramsim::kernels;
  HarnessOptions options;
  try {
    options = parse_options(argc, argv);
  } catch (const HelpRequested&) {
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "vramsim-calibrate: %s\n", e.what());
    return 2;
  }
#if VRAMSIM_HAVE_MPI
  if (options.mpi) MPI_Init(&argc, &argv);
#endif
  int code = 0;
  try {
    code = run(options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "vramsim-calibrate: %s\n", e.what());
    code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vramsim-calibrate: %s\n", e.what());
    code = 1;
  }
#if VRAMSIM_HAVE_MPI
  if (options.mpi) MPI_Finalize();
#endif
  return code;
}
