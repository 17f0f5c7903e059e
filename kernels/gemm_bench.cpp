// Matrix products with cuBLASLt at the zoo's shapes (gemm_shapes.hpp): C[m x n] = X[m x k] W^T
// with W stored [n][k] as a Linear weight, i.e. cuBLASLt's "TN" column-major form
// D(n x m) = op_T(W) * X^T, fp32 accumulation, bf16 output. bf16 always; fp16 too; fp8 (e4m3
// inputs) on compute capability >= 8.9. The algorithm is cuBLASLt's first heuristic choice
// with a 32 MiB workspace; a shape with no algorithm (fp8 at m not a multiple of 16) is logged
// and skipped. bf16 results are checked at 8 sampled entries against a CPU dot
// product of the same (regenerated) inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <vector>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "kernels/gemm_shapes.hpp"
#include "kernels/launchers.hpp"
#include "sim/model/model_zoo.hpp"

namespace vramsim::kernels {

namespace {

using calibration::CheckOutcome;

constexpr std::uint64_t kSeedX = 11, kSeedW = 13;

struct Dtype {
  const char* name;
  cudaDataType_t type;
  std::size_t bytes;
};

// One cuBLASLt matmul plan for a shape; frees its descriptors.
class LtPlan {
 public:
  LtPlan(BenchContext& ctx, const Dtype& in, std::int64_t m, std::int64_t n, std::int64_t k)
      : ctx_(ctx) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const auto um = static_cast<std::uint64_t>(m), un = static_cast<std::uint64_t>(n),
               uk = static_cast<std::uint64_t>(k);
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in.type, uk, un, static_cast<std::int64_t>(uk)));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in.type, uk, um, static_cast<std::int64_t>(uk)));
    // Output: fp16 for fp16 inputs, bf16 otherwise (fp8 inputs: bf16, a supported D type).
    const cudaDataType_t out = in.type == CUDA_R_16F ? CUDA_R_16F : CUDA_R_16BF;
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, out, un, um, static_cast<std::int64_t>(un)));
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    const std::uint64_t ws = ctx.workspace_bytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    // NOTE: no CUBLAS_CHECK here: an unsupported shape (fp8 needs multiples of 16) answers
    // CUBLAS_STATUS_NOT_SUPPORTED, a skip rather than a failure.
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc_, a_, b_, d_, d_,
                                                                 pref_, 1, &heuristic_, &found);
    ok_ = status == CUBLAS_STATUS_SUCCESS && found > 0;
  }
  ~LtPlan() {
    cublasLtMatmulPreferenceDestroy(pref_);
    cublasLtMatrixLayoutDestroy(d_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatmulDescDestroy(desc_);
  }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  bool ok() const { return ok_; }
  void run(const void* w, const void* x, void* d) {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasLtMatmul(ctx_.lt, desc_, &alpha, w, a_, x, b_, &beta, d, d_, d, d_,
                                &heuristic_.algo, ctx_.workspace, ctx_.workspace_bytes,
                                ctx_.stream));
  }

 private:
  BenchContext& ctx_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  bool ok_ = false;
};

// d[i][j] (row-major m x n, bf16) at 8 sampled entries against the CPU dot product.
CheckOutcome check_bf16(const DeviceBuffer& d, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<float> got, want;
  for (int s = 0; s < 8; ++s) {
    const std::int64_t i = (s * 7919) % m, j = (s * 104729) % n;
    std::uint16_t raw = 0;
    CUDA_CHECK(cudaMemcpy(&raw, d.as<std::uint16_t>() + i * n + j, 2, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      sum += static_cast<double>(random_bf16_value(static_cast<std::uint64_t>(i * k + kk), kSeedX, 1.0f)) *
             static_cast<double>(random_bf16_value(static_cast<std::uint64_t>(j * k + kk), kSeedW, 1.0f));
    }
    got.push_back(bf16_to_float(raw));
    want.push_back(static_cast<float>(sum));
  }
  // bf16 output: 2^-8 relative rounding; fp32 accumulation order: ~1e-3 of sqrt(k).
  return compare(got, want, 1.0 / 128.0, 2e-3 * std::sqrt(static_cast<double>(k)));
}

}  // namespace

void run_gemm_bench(BenchContext& ctx, calibration::CalibrationProfile& profile) {
  const std::filesystem::path zoo = model::default_zoo_dir();
  const std::array<int, 4> tps = {1, 2, 4, 8};
  std::vector<std::string> models = default_calibration_models();
  if (ctx.options.quick) models.resize(1);
  const std::vector<GemmShape> shapes = zoo_gemm_shapes(models, tps, zoo);
  const std::vector<std::int64_t> tokens = default_gemm_tokens(ctx.options.quick);
  std::vector<Dtype> dtypes = {{"bf16", CUDA_R_16BF, 2}, {"fp16", CUDA_R_16F, 2}};
  if (ctx.cc_major * 10 + ctx.cc_minor >= 89) dtypes.push_back({"fp8", CUDA_R_8F_E4M3, 1});
  EventTimer timer(ctx.stream);
  ctx.log << fmt::format("gemm: {} shapes x {} token counts x {} dtypes\n", shapes.size(),
                         tokens.size(), dtypes.size());

  for (const GemmShape& shape : shapes) {
    const std::int64_t m_max = tokens.back();
    // Inputs are filled as bf16 bits whatever the dtype: for fp16 / fp8 only the timing
    // matters (their results are not checked), and every bit pattern is a finite value of a
    // 16-bit type; fp8 buffers get the first half of the same bytes.
    DeviceBuffer w(static_cast<std::size_t>(shape.n * shape.k) * 2);
    DeviceBuffer x(static_cast<std::size_t>(m_max * shape.k) * 2);
    DeviceBuffer d(static_cast<std::size_t>(m_max * shape.n) * 2);
    launch_fill_random_bf16(w.as<std::uint16_t>(), static_cast<std::size_t>(shape.n * shape.k), kSeedW, 1.0f, ctx.stream);
    launch_fill_random_bf16(x.as<std::uint16_t>(), static_cast<std::size_t>(m_max * shape.k), kSeedX, 1.0f, ctx.stream);
    for (const Dtype& dt : dtypes) {
      if (dt.type == CUDA_R_8F_E4M3) {
        // Small e4m3 values (0x00-0x3f patterns avoid NaN 0x7f / 0xff).
        CUDA_CHECK(cudaMemsetAsync(w.get(), 0x30, static_cast<std::size_t>(shape.n * shape.k), ctx.stream));
        CUDA_CHECK(cudaMemsetAsync(x.get(), 0x30, static_cast<std::size_t>(m_max * shape.k), ctx.stream));
      }
      for (std::int64_t m : tokens) {
        LtPlan plan(ctx, dt, m, shape.n, shape.k);
        if (!plan.ok()) {
          ctx.log << fmt::format("gemm {} m={} n={} k={}: no cuBLASLt algorithm, skipped\n",
                                 dt.name, m, shape.n, shape.k);
          continue;
        }
        calibration::GemmRecord r;
        r.dtype = dt.name;
        r.m = m;
        r.n = shape.n;
        r.k = shape.k;
        r.label = shape.label;
        r.timing = time_repetitions(timer, ctx.options.warmup, ctx.options.repetitions,
                                    [&] { plan.run(w.get(), x.get(), d.get()); });
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        r.check = dt.type == CUDA_R_16BF ? check_bf16(d, m, shape.n, shape.k)
                                         : CheckOutcome::kNotChecked;
        const double rate = 2.0 * static_cast<double>(m * shape.n) * static_cast<double>(shape.k) /
                            r.timing.median_s;
        ctx.log << fmt::format("gemm {:<4} m={:<6} n={:<7} k={:<6} {:>10.2f} us {:>8.1f} TFLOP/s {}\n",
                               dt.name, m, shape.n, shape.k, r.timing.median_s * 1e6,
                               rate / 1e12, r.check == CheckOutcome::kFailed ? "CHECK FAILED" : "");
        profile.gemms.push_back(r);
      }
      if (dt.type == CUDA_R_8F_E4M3) {  // restore the bf16 data for later dtypes
        launch_fill_random_bf16(w.as<std::uint16_t>(), static_cast<std::size_t>(shape.n * shape.k), kSeedW, 1.0f, ctx.stream);
        launch_fill_random_bf16(x.as<std::uint16_t>(), static_cast<std::size_t>(m_max * shape.k), kSeedX, 1.0f, ctx.stream);
      }
    }
  }
}

}  // namespace vramsim::kernels
