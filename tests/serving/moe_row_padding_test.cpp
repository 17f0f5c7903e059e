// The rows a fused MoE kernel computes (sim/serving/moe_row_padding.hpp): the kernels' block
// rules, the expected padded rows against sums done here, and the roofline's routed-expert
// arithmetic scaled by exactly that padding.
#include "sim/serving/moe_row_padding.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "tests/catch.hpp"

namespace vramsim::serving {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

// E[ceil(X / b)] * b * e for X ~ Binomial(n, k / e), every term of the pmf from its logarithm.
double brute_force_rows(std::int64_t n, std::int64_t k, std::int64_t e, std::int64_t b) {
  const double p = static_cast<double>(k) / static_cast<double>(e);
  double blocks = 0.0;
  for (std::int64_t x = 0; x <= n; ++x) {
    const double log_pmf = std::lgamma(static_cast<double>(n) + 1.0) -
                           std::lgamma(static_cast<double>(x) + 1.0) -
                           std::lgamma(static_cast<double>(n - x) + 1.0) +
                           static_cast<double>(x) * std::log(p) +
                           static_cast<double>(n - x) * std::log1p(-p);
    blocks += std::exp(log_pmf) * static_cast<double>((x + b - 1) / b);
  }
  return blocks * static_cast<double>(b * e);
}

}  // namespace

TEST_CASE("the fused MoE kernels block each expert's rows as vLLM configures them",
          "[serving][cost]") {
  // Triton fused_moe's default config: 16 rows while the step has no more tokens than experts.
  CHECK(moe_block_rows(MoeKernel::kTritonFusedMoe, 1, 8, 128) == 16);
  CHECK(moe_block_rows(MoeKernel::kTritonFusedMoe, 128, 8, 128) == 16);
  CHECK(moe_block_rows(MoeKernel::kTritonFusedMoe, 129, 8, 128) == 64);
  // matmul_ogs: the next power of two of the mean per expert, within [16, 128].
  CHECK(moe_block_rows(MoeKernel::kMatmulOgs, 40, 4, 128) == 16);     // 1 per expert
  CHECK(moe_block_rows(MoeKernel::kMatmulOgs, 1000, 4, 128) == 32);   // 31 per expert
  CHECK(moe_block_rows(MoeKernel::kMatmulOgs, 1024, 4, 128) == 32);   // 32 per expert
  CHECK(moe_block_rows(MoeKernel::kMatmulOgs, 1056, 4, 128) == 64);   // 33 per expert
  CHECK(moe_block_rows(MoeKernel::kMatmulOgs, 5000, 4, 128) == 128);  // 156 per expert
  // fused_marlin_moe: the first block of 8, 16, 32, 48, 64 that the mean per expert fills to
  // less than 0.9, else 64.
  CHECK(moe_block_rows(MoeKernel::kMarlin, 1, 4, 128) == 8);       // 0.03 per expert
  CHECK(moe_block_rows(MoeKernel::kMarlin, 230, 4, 128) == 8);     // 7.19 < 0.9 * 8 = 7.2
  CHECK(moe_block_rows(MoeKernel::kMarlin, 231, 4, 128) == 16);    // 7.22
  CHECK(moe_block_rows(MoeKernel::kMarlin, 1000, 4, 128) == 48);   // 31.25 >= 28.8, < 43.2
  CHECK(moe_block_rows(MoeKernel::kMarlin, 1382, 4, 128) == 48);   // 43.19 < 0.9 * 48 = 43.2
  CHECK(moe_block_rows(MoeKernel::kMarlin, 1383, 4, 128) == 64);   // 43.22
  CHECK(moe_block_rows(MoeKernel::kMarlin, 8000, 4, 128) == 64);   // 250: the largest block
}

TEST_CASE("expected padded MoE rows match hand-computed cases", "[serving][cost]") {
  CHECK(expected_moe_rows(0, 8, 128, 64) == 0.0);
  // One token, one of two experts: half the time an expert holds it in a block of 16.
  CHECK(expected_moe_rows(1, 1, 2, 16) == Approx(2.0 * 16.0 * 0.5));
  // Blocks of one row: no padding, the rows are the assignments.
  CHECK(expected_moe_rows(2, 1, 2, 1) == Approx(2.0));
  CHECK(expected_moe_rows(700, 2, 16, 1) == Approx(1400.0));
  // Every expert takes every token: 100 rows in blocks of 64 are 2 blocks on each of 4.
  CHECK(expected_moe_rows(100, 4, 4, 64) == 4.0 * 2.0 * 64.0);
  // Never fewer rows than the assignments.
  CHECK(expected_moe_rows(3, 8, 128, 16) >= 24.0);
}

TEST_CASE("expected padded MoE rows agree with the binomial summed term by term",
          "[serving][cost]") {
  // Small means (exact path) and large ones (normal approximation), both block rules.
  struct Case {
    std::int64_t tokens, top_k, experts, block;
  };
  for (const Case c : {Case{64, 8, 128, 16}, Case{512, 8, 128, 64}, Case{1000, 8, 128, 64},
                       Case{1100, 8, 128, 64}, Case{2048, 8, 128, 64}, Case{5000, 4, 128, 128},
                       Case{8192, 4, 128, 128}, Case{8192, 8, 64, 64}}) {
    INFO(c.tokens << " tokens, top-" << c.top_k << " of " << c.experts << ", block " << c.block);
    CHECK(expected_moe_rows(c.tokens, c.top_k, c.experts, c.block) ==
          Approx(brute_force_rows(c.tokens, c.top_k, c.experts, c.block)).epsilon(0.005));
  }
  // Hand: 5000 tokens, top-4 of 128 (gpt-oss-120b's prefill of llm-d's 5,000-token prompts):
  // 156.25 assignments per expert (sd 12.3), almost always 2 blocks of 128 rows, so about
  // 128 * 2 * 128 = 32,768 rows for 20,000 assignments.
  const double f = moe_padding_factor(MoeKernel::kMatmulOgs, 5000, 4, 128);
  CHECK(f > 1.62);
  CHECK(f < 1.64);
  CHECK(moe_padding_factor(MoeKernel::kMatmulOgs, 0, 4, 128) == 1.0);
}

TEST_CASE("the roofline's routed experts compute their padded rows", "[serving][cost]") {
  // Qwen3-30B-A3B on an H100: a prefill of T tokens is compute bound in every matmul group,
  // so linear = (dense FLOPs/token * T + expert FLOPs/token * T * padding(T)) / rate + the
  // lm_head's read for its one logit row. Taking the experts' padded part out leaves a line in
  // T: equal steps of T give equal steps of the remainder only if the padding is the one
  // charged.
  const model::ModelSpec qwen =
      model::load_model("Qwen/Qwen3-30B-A3B", kRoot / "scenarios" / "models");
  const hardware::DeviceSpec h100 = io::find_device("h100-sxm", kRoot / "topologies");
  const RooflineOptions options;
  const RooflineTimeModel m(qwen, h100, {}, model::WeightFormat{}, DType::kBf16, options);
  const model::MoeSpec& moe = *qwen.moe;
  const double expert_flops_per_token = 2.0 * static_cast<double>(moe.num_experts_per_tok) *
                                        static_cast<double>(qwen.num_layers) * 3.0 *
                                        static_cast<double>(qwen.hidden_size) *
                                        static_cast<double>(moe.expert_intermediate_size);
  const double rate = 989.4e12 * options.matmul_efficiency;  // h100-sxm.toml's dense bf16
  const auto rest = [&](std::int64_t tokens) {
    BatchShape b;
    b.prefills.push_back({tokens, 0});
    const double padding = moe_padding_factor(MoeKernel::kTritonFusedMoe, tokens,
                                              moe.num_experts_per_tok, moe.num_experts);
    CHECK(padding > 1.0);
    return m.step_time(b).linear.seconds() -
           expert_flops_per_token * static_cast<double>(tokens) * padding / rate;
  };
  const double r4 = rest(4096), r6 = rest(6144), r8 = rest(8192);
  CHECK(r8 - r6 == Approx(r6 - r4).epsilon(1e-6));
  CHECK(r4 > 0.0);
}

}  // namespace vramsim::serving
