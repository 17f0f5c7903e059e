// Paged decode attention (paged_attention.cu) over batch x context for Llama-3.1-8B's heads
// (32 query heads, 8 KV heads of 128, bf16 KV, 16-token blocks). The block table is a shuffled
// permutation of the pool, as in a long-running server. KV bytes read = batch x context x 2 x
// 8 x 128 x 2 B. Sequence 0's output is checked at every point against a CPU reference that
// regenerates q, K and V from their hash (random_hash.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "kernels/launchers.hpp"

namespace vramsim::kernels {

namespace {

constexpr int kQHeads = 32, kKvHeads = 8, kHeadDim = 128, kBlock = 16;
constexpr std::uint64_t kSeedQ = 21, kSeedK = 22, kSeedV = 23;

// Attention output of sequence 0 on the CPU, all query heads.
std::vector<float> reference_seq0(const std::vector<std::int32_t>& table, int context,
                                  float scale) {
  std::vector<float> out(static_cast<std::size_t>(kQHeads * kHeadDim));
  std::vector<double> scores(static_cast<std::size_t>(context));
  const int group = kQHeads / kKvHeads;
  for (int h = 0; h < kQHeads; ++h) {
    const int kvh = h / group;
    auto kv_index = [&](int t, int d) {
      const auto row = (static_cast<std::uint64_t>(table[static_cast<std::size_t>(t / kBlock)]) * kBlock +
                        static_cast<std::uint64_t>(t % kBlock)) * kKvHeads + static_cast<std::uint64_t>(kvh);
      return row * kHeadDim + static_cast<std::uint64_t>(d);
    };
    double mx = -1e300;
    for (int t = 0; t < context; ++t) {
      double s = 0;
      for (int d = 0; d < kHeadDim; ++d) {
        s += static_cast<double>(random_bf16_value(static_cast<std::uint64_t>(h * kHeadDim + d), kSeedQ, 1.0f)) *
             static_cast<double>(random_bf16_value(kv_index(t, d), kSeedK, 1.0f));
      }
      scores[static_cast<std::size_t>(t)] = s * static_cast<double>(scale);
      mx = std::max(mx, scores[static_cast<std::size_t>(t)]);
    }
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - mx));
    for (int d = 0; d < kHeadDim; ++d) {
      double o = 0;
      for (int t = 0; t < context; ++t) {
        o += scores[static_cast<std::size_t>(t)] *
             static_cast<double>(random_bf16_value(kv_index(t, d), kSeedV, 1.0f));
      }
      out[static_cast<std::size_t>(h * kHeadDim + d)] = static_cast<float>(o / sum);
    }
  }
  return out;
}

}  // namespace

void run_decode_attention_bench(BenchContext& ctx, calibration::CalibrationProfile& profile) {
  const std::vector<int> batches =
      ctx.options.quick ? std::vector<int>{1, 16} : std::vector<int>{1, 4, 16, 64, 256};
  const std::vector<int> contexts = ctx.options.quick ? std::vector<int>{512, 2048}
                                                      : std::vector<int>{128, 512, 2048, 8192, 32768};
  const std::size_t max_tokens =
      static_cast<std::size_t>(batches.back()) * static_cast<std::size_t>(contexts.back());
  const std::size_t num_blocks = max_tokens / kBlock;
  const std::size_t kv_elems = num_blocks * kBlock * kKvHeads * kHeadDim;
  DeviceBuffer k(kv_elems * 2), v(kv_elems * 2);
  DeviceBuffer q(static_cast<std::size_t>(batches.back()) * kQHeads * kHeadDim * 2);
  DeviceBuffer out(static_cast<std::size_t>(batches.back()) * kQHeads * kHeadDim * 4);
  launch_fill_random_bf16(k.as<std::uint16_t>(), kv_elems, kSeedK, 1.0f, ctx.stream);
  launch_fill_random_bf16(v.as<std::uint16_t>(), kv_elems, kSeedV, 1.0f, ctx.stream);
  // Every sequence gets the same q (sequence 0's values repeated is not needed: fill all).
  launch_fill_random_bf16(q.as<std::uint16_t>(),
                          static_cast<std::size_t>(batches.back()) * kQHeads * kHeadDim, kSeedQ,
                          1.0f, ctx.stream);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  EventTimer timer(ctx.stream);

  for (int batch : batches) {
    for (int context : contexts) {
      const int blocks_per_seq = (context + kBlock - 1) / kBlock;
      std::vector<std::int32_t> table(static_cast<std::size_t>(batch * blocks_per_seq));
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), std::mt19937(static_cast<unsigned>(batch * 7 + context)));
      std::vector<std::int32_t> lens(static_cast<std::size_t>(batch), context);
      DeviceBuffer d_table(table.size() * 4), d_lens(lens.size() * 4);
      CUDA_CHECK(cudaMemcpy(d_table.get(), table.data(), table.size() * 4, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(d_lens.get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice));
      auto run = [&] {
        launch_paged_decode_attention(q.as<std::uint16_t>(), k.as<std::uint16_t>(),
                                      v.as<std::uint16_t>(), d_table.as<std::int32_t>(),
                                      d_lens.as<std::int32_t>(), out.as<float>(), batch, kQHeads,
                                      kKvHeads, kBlock, blocks_per_seq, scale, ctx.stream);
      };
      calibration::DecodeAttentionRecord r;
      r.batch = batch;
      r.context = context;
      r.num_q_heads = kQHeads;
      r.num_kv_heads = kKvHeads;
      r.head_dim = kHeadDim;
      r.block_size = kBlock;
      r.kv_dtype = "bf16";
      r.timing = time_repetitions(timer, ctx.options.warmup, ctx.options.repetitions, run);
      std::vector<float> got(static_cast<std::size_t>(kQHeads * kHeadDim));
      CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
      const std::vector<std::int32_t> seq0(table.begin(), table.begin() + blocks_per_seq);
      r.check = compare(got, reference_seq0(seq0, context, scale), 1e-2, 2e-3);
      const double bytes = static_cast<double>(batch) * context * 2.0 * kKvHeads * kHeadDim * 2.0;
      ctx.log << fmt::format("decode batch={:<4} context={:<6} {:>10.2f} us {:>8.1f} GB/s {}\n",
                             batch, context, r.timing.median_s * 1e6,
                             bytes / r.timing.median_s / 1e9,
                             r.check == calibration::CheckOutcome::kPassed ? "ok" : "CHECK FAILED");
      profile.decode_attention.push_back(r);
    }
  }
}

}  // namespace vramsim::kernels
