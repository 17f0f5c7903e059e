// Prefill attention over sequence length, unfused: per head, S = Q K^T (cuBLAS, bf16 in, fp32
// accumulate, bf16 scores), a causal softmax kernel (paged_attention.cu), O = P V. Llama-3.1-8B
// heads: 32 query heads of 128; the 8 KV heads are expanded to 32 (the GEMM work of GQA is the
// same). NOTE: an unfused implementation computes the full S x S product and moves the scores
// through memory; FlashAttention-style kernels are faster, so these times bound prefill
// attention from above. FLOPs are counted as causal (4 x 128 x S (S + 1) / 2 per head).
// Checked at the smallest length (head 0, three rows) against a CPU reference.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "kernels/launchers.hpp"

namespace vramsim::kernels {

namespace {

constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 128;
constexpr std::uint64_t kSeedQ = 31, kSeedK = 32, kSeedV = 33;

float value(std::uint64_t seed, int head, int seq_len, int row, int d) {
  const auto index = (static_cast<std::uint64_t>(head) * static_cast<std::uint64_t>(seq_len) +
                      static_cast<std::uint64_t>(row)) * kHeadDim + static_cast<std::uint64_t>(d);
  return random_bf16_value(index, seed, 1.0f);
}

std::vector<float> reference_row(int seq_len, int row, float scale) {
  std::vector<double> p(static_cast<std::size_t>(row + 1));
  double mx = -1e300;
  for (int j = 0; j <= row; ++j) {
    double s = 0;
    for (int d = 0; d < kHeadDim; ++d) {
      s += static_cast<double>(value(kSeedQ, 0, seq_len, row, d)) *
           static_cast<double>(value(kSeedK, 0, seq_len, j, d));
    }
    p[static_cast<std::size_t>(j)] = s * static_cast<double>(scale);
    mx = std::max(mx, p[static_cast<std::size_t>(j)]);
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - mx));
  std::vector<float> out(kHeadDim);
  for (int d = 0; d < kHeadDim; ++d) {
    double o = 0;
    for (int j = 0; j <= row; ++j) {
      o += p[static_cast<std::size_t>(j)] * static_cast<double>(value(kSeedV, 0, seq_len, j, d));
    }
    out[static_cast<std::size_t>(d)] = static_cast<float>(o / sum);
  }
  return out;
}

}  // namespace

void run_prefill_attention_bench(BenchContext& ctx, calibration::CalibrationProfile& profile) {
  const std::vector<int> lengths = ctx.options.quick
                                       ? std::vector<int>{512, 2048}
                                       : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384};
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  EventTimer timer(ctx.stream);
  CUBLAS_CHECK(cublasSetStream(ctx.blas, ctx.stream));
  CUBLAS_CHECK(cublasSetWorkspace(ctx.blas, ctx.workspace, ctx.workspace_bytes));
  for (int s : lengths) {
    const std::size_t elems = static_cast<std::size_t>(kHeads) * static_cast<std::size_t>(s) * kHeadDim;
    DeviceBuffer q(elems * 2), k(elems * 2), v(elems * 2), o(elems * 2);
    DeviceBuffer scores(static_cast<std::size_t>(s) * static_cast<std::size_t>(s) * 2);
    launch_fill_random_bf16(q.as<std::uint16_t>(), elems, kSeedQ, 1.0f, ctx.stream);
    launch_fill_random_bf16(k.as<std::uint16_t>(), elems, kSeedK, 1.0f, ctx.stream);
    launch_fill_random_bf16(v.as<std::uint16_t>(), elems, kSeedV, 1.0f, ctx.stream);
    const float one = 1.0f, zero = 0.0f;
    auto run = [&] {
      for (int h = 0; h < kHeads; ++h) {
        const std::size_t off = static_cast<std::size_t>(h) * static_cast<std::size_t>(s) * kHeadDim;
        // Scores, row-major [i][j] = q_i . k_j: column-major S^T = op_T(K) * Q.
        CUBLAS_CHECK(cublasGemmEx(ctx.blas, CUBLAS_OP_T, CUBLAS_OP_N, s, s, kHeadDim, &one,
                                  k.as<std::uint16_t>() + off, CUDA_R_16BF, kHeadDim,
                                  q.as<std::uint16_t>() + off, CUDA_R_16BF, kHeadDim, &zero,
                                  scores.get(), CUDA_R_16BF, s, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
        launch_causal_softmax_bf16(scores.as<std::uint16_t>(), s, s, 0, scale, ctx.stream);
        // O row-major [i][d] = sum_j P[i][j] V[j][d]: column-major O^T = V^T * P^T.
        CUBLAS_CHECK(cublasGemmEx(ctx.blas, CUBLAS_OP_N, CUBLAS_OP_N, kHeadDim, s, s, &one,
                                  v.as<std::uint16_t>() + off, CUDA_R_16BF, kHeadDim,
                                  scores.get(), CUDA_R_16BF, s, &zero,
                                  o.as<std::uint16_t>() + off, CUDA_R_16BF, kHeadDim,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      }
    };
    calibration::PrefillAttentionRecord r;
    r.batch = 1;
    r.seq_len = s;
    r.num_q_heads = kHeads;
    r.num_kv_heads = kKvHeads;
    r.head_dim = kHeadDim;
    r.dtype = "bf16";
    r.implementation = "unfused-cublas";
    r.timing = time_repetitions(timer, ctx.options.warmup, ctx.options.repetitions, run);
    if (s == lengths.front()) {
      std::vector<float> got, want;
      for (int row : {0, s / 2, s - 1}) {
        std::vector<std::uint16_t> raw(kHeadDim);
        CUDA_CHECK(cudaMemcpy(raw.data(), o.as<std::uint16_t>() + static_cast<std::size_t>(row) * kHeadDim,
                              kHeadDim * 2, cudaMemcpyDeviceToHost));
        const std::vector<float> ref = reference_row(s, row, scale);
        for (int d = 0; d < kHeadDim; ++d) {
          got.push_back(bf16_to_float(raw[static_cast<std::size_t>(d)]));
          want.push_back(ref[static_cast<std::size_t>(d)]);
        }
      }
      // bf16 scores and probabilities: ~1 % error on a weighted mean of values in [-1, 1].
      r.check = compare(got, want, 3e-2, 1e-2);
    }
    const double flops = 4.0 * kHeads * kHeadDim * static_cast<double>(s) * (s + 1.0) / 2.0;
    ctx.log << fmt::format("prefill seq_len={:<6} {:>10.2f} us {:>8.1f} TFLOP/s (causal) {}\n", s,
                           r.timing.median_s * 1e6, flops / r.timing.median_s / 1e12,
                           r.check == calibration::CheckOutcome::kFailed ? "CHECK FAILED" : "");
    profile.prefill_attention.push_back(r);
  }
}

}  // namespace vramsim::kernels
