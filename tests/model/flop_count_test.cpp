#include "sim/model/flop_count.hpp"

#include <cstdint>

#include "sim/model/param_count.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::zoo;

TEST_CASE("a Llama-3.1-8B token costs 2 x matmul weights plus 4 x heads x head_dim per "
          "attended token per layer",
          "[model][flops]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.1-8B");
  // Token at position 4095 attends 4096 tokens.
  const TokenFlops f = flops_per_token(m, 4095);
  const double linear = 2.0 * 32 * 218'103'808;      // q,k,v,o + gate,up,down per layer
  const double lm_head = 2.0 * 4096 * 128256;
  const double attention = 32.0 * 4 * 32 * 128 * 4096;  // 2,147,483,648
  CHECK(f.linear.count() == linear);
  CHECK(f.lm_head.count() == lm_head);
  CHECK(f.attention.count() == attention);
  // ~= 2 x (params - token embedding) + attention (Kaplan et al. 2020, eq. 2.2 with n_ctx).
  const ParamCount p = count_params(m);
  const double two_n = 2.0 * static_cast<double>(p.active - p.embedding);
  CHECK(f.total().count() == Approx(two_n + attention).epsilon(1e-4));
}

TEST_CASE("a prefill chunk sums its tokens' attention and computes logits once",
          "[model][flops]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.1-8B");
  double by_token = 0.0;
  for (std::int64_t p = 100; p < 103; ++p) {
    const TokenFlops t = flops_per_token(m, p);
    by_token += t.linear.count() + t.attention.count();
  }
  const double lm_head = flops_per_token(m, 0).lm_head.count();
  CHECK(prefill_flops(m, 3, 100).count() == Approx(by_token + lm_head));
  CHECK(prefill_flops(m, 3, 100, /*all_logits=*/true).count() ==
        Approx(by_token + 3 * lm_head));
  // A whole prompt of n tokens: n(n+1)/2 attended pairs per layer.
  const double n = 1024;
  CHECK(prefill_flops(m, 1024).count() ==
        Approx(n * flops_per_token(m, 0).linear.count() + 32.0 * 4 * 32 * 128 * n * (n + 1) / 2 +
               lm_head));
}

TEST_CASE("a sliding window caps the attention term", "[model][flops]") {
  const ModelSpec m = zoo("mistralai/Mistral-7B-v0.1");
  CHECK(flops_per_token(m, 100'000).attention == flops_per_token(m, 4095).attention);
  CHECK(flops_per_token(m, 4094).attention < flops_per_token(m, 4095).attention);
  // Prefill of 8192 tokens: 4096*4097/2 pairs, then 4096 for each of the remaining 4096.
  const double per_pair = 32.0 * 4 * 32 * 128;
  const double expected_attention = per_pair * (4096.0 * 4097 / 2 + 4096.0 * 4096);
  const double linear = flops_per_token(m, 0).linear.count();
  const double lm_head = flops_per_token(m, 0).lm_head.count();
  CHECK(prefill_flops(m, 8192).count() ==
        Approx(8192 * linear + expected_attention + lm_head));
}

TEST_CASE("MoE tokens pay for the top-k experts only", "[model][flops][moe]") {
  const ModelSpec m = zoo("mistralai/Mixtral-8x7B-v0.1");
  const ParamCount p = count_params(m);
  const TokenFlops f = flops_per_token(m, 0);
  // Active weights minus the token embedding and the norms, times 2.
  const double norms = 65.0 * 4096;
  CHECK(f.linear.count() + f.lm_head.count() ==
        2.0 * (static_cast<double>(p.active - p.embedding) - norms));
}

TEST_CASE("MLA decode attends over the latent, prefill over decompressed heads",
          "[model][flops][mla]") {
  const ModelSpec m = zoo("deepseek-ai/DeepSeek-V2-Lite");
  CHECK(attention_flops_per_attended_token(m, ForwardMode::kPrefill) ==
        2.0 * 16 * (128 + 64) + 2.0 * 16 * 128);
  CHECK(attention_flops_per_attended_token(m, ForwardMode::kDecode) ==
        2.0 * 16 * (512 + 64) + 2.0 * 16 * 512);
  const TokenFlops d = flops_per_token(m, 999, ForwardMode::kDecode);
  CHECK(d.attention.count() == 27.0 * 1000 * (2.0 * 16 * 576 + 2.0 * 16 * 512));
  CHECK(decode_flops(m, 1000) == d.total());
}
