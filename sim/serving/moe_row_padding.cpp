#include "sim/serving/moe_row_padding.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim::serving {

namespace {

// Mean assignments per expert up to which the binomial tail is summed term by term.
constexpr double kExactMeanLimit = 64.0;

void check_routing(std::int64_t num_tokens, std::int64_t top_k, std::int64_t num_experts) {
  VRAMSIM_CHECK(num_tokens >= 0, "negative token count {}", num_tokens);
  VRAMSIM_CHECK(top_k >= 1 && top_k <= num_experts, "top-k {} of {} experts", top_k,
                num_experts);
}

std::int64_t next_power_of_two(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// E[ceil(X / b)] for X ~ Binomial(n, p), by the pmf's recursion from X = 0 (the mean n p is
// at most kExactMeanLimit, so (1 - p)^n does not underflow).
double expected_blocks_exact(std::int64_t n, double p, std::int64_t b) {
  const double mean = static_cast<double>(n) * p;
  const auto last = std::min<std::int64_t>(
      n, static_cast<std::int64_t>(mean + 12.0 * std::sqrt(mean) + 12.0));
  const double ratio = p / (1.0 - p);
  double pmf = std::pow(1.0 - p, static_cast<double>(n));
  double blocks = 0.0;
  for (std::int64_t x = 0; x <= last; ++x) {
    blocks += pmf * static_cast<double>((x + b - 1) / b);
    pmf *= static_cast<double>(n - x) / static_cast<double>(x + 1) * ratio;
  }
  return blocks;
}

// The same from the normal approximation: sum_{j >= 0} P(X > j b), P(X > t) ~ Q((t + 0.5 -
// mean) / sd).
double expected_blocks_normal(std::int64_t n, double p, std::int64_t b) {
  const double mean = static_cast<double>(n) * p;
  const double sd = std::sqrt(mean * (1.0 - p));
  const double top = mean + 10.0 * sd;
  double blocks = 0.0;
  for (std::int64_t j = 0; static_cast<double>(j * b) <= top; ++j) {
    const double z = (static_cast<double>(j * b) + 0.5 - mean) / sd;
    blocks += 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  return blocks;
}

}  // namespace

std::int64_t moe_block_rows(MoeKernel kernel, std::int64_t num_tokens, std::int64_t top_k,
                            std::int64_t num_experts) {
  check_routing(num_tokens, top_k, num_experts);
  VRAMSIM_CHECK(num_tokens >= 1, "no tokens to route");
  switch (kernel) {
    case MoeKernel::kTritonFusedMoe: return num_tokens <= num_experts ? 16 : 64;
    case MoeKernel::kMatmulOgs: {
      const std::int64_t per_expert = std::max<std::int64_t>(1, num_tokens * top_k / num_experts);
      return std::clamp<std::int64_t>(next_power_of_two(per_expert), 16, 128);
    }
    case MoeKernel::kMarlin: {
      // M * k / E / b < 0.9  <=>  10 * M * k < 9 * E * b, in integers.
      for (const std::int64_t b : {8, 16, 32, 48}) {
        if (10 * num_tokens * top_k < 9 * num_experts * b) return b;
      }
      return 64;
    }
  }
  VRAMSIM_UNREACHABLE("MoeKernel");
}

double expected_moe_rows(std::int64_t num_tokens, std::int64_t top_k, std::int64_t num_experts,
                         std::int64_t block_rows) {
  check_routing(num_tokens, top_k, num_experts);
  VRAMSIM_CHECK(block_rows >= 1, "block of {} rows", block_rows);
  if (num_tokens == 0) return 0.0;
  const double p = static_cast<double>(top_k) / static_cast<double>(num_experts);
  if (top_k == num_experts) {  // every expert gets every token
    const std::int64_t blocks = (num_tokens + block_rows - 1) / block_rows;
    return static_cast<double>(num_experts * blocks * block_rows);
  }
  const double mean = static_cast<double>(num_tokens) * p;
  const double blocks = mean <= kExactMeanLimit ? expected_blocks_exact(num_tokens, p, block_rows)
                                                : expected_blocks_normal(num_tokens, p, block_rows);
  const double rows = static_cast<double>(num_experts) * static_cast<double>(block_rows) * blocks;
  return std::max(rows, static_cast<double>(num_tokens * top_k));
}

double moe_padding_factor(MoeKernel kernel, std::int64_t num_tokens, std::int64_t top_k,
                          std::int64_t num_experts) {
  if (num_tokens == 0) return 1.0;
  const std::int64_t block = moe_block_rows(kernel, num_tokens, top_k, num_experts);
  return expected_moe_rows(num_tokens, top_k, num_experts, block) /
         static_cast<double>(num_tokens * top_k);
}

}  // namespace vramsim::serving
