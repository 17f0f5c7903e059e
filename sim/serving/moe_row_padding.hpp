// The rows a fused MoE kernel computes for its routed tokens, padding included.
//
// vLLM's fused MoE kernels sort a step's (token, expert) assignments by expert and cut each
// expert's list into blocks of a fixed number of rows; a block is one tile of the grouped GEMM,
// computed whole even when the expert's last block is only partly filled. An expert hit by n
// assignments therefore costs ceil(n / B) * B rows, not n. At the 100-300 assignments per
// expert of a prefill chunk this is up to twice the arithmetic of the routed tokens alone.
//
// The block B, by kernel (vLLM's defaults; a tuned config file for the exact E, N and GPU,
// where vLLM ships one, replaces the Triton kernel's):
//   kTritonFusedMoe  vLLM's Triton fused_moe (unquantized, FP8 and INT8 MoE weights):
//                    BLOCK_SIZE_M = 16 when the step's tokens M <= E, else 64
//                    (vllm/model_executor/layers/fused_moe/fused_moe.py, get_default_config;
//                    the rows padded by moe_align_block_size).
//   kMatmulOgs       OpenAI's triton_kernels matmul_ogs, vLLM's MXFP4 MoE backend on Hopper
//                    (gpt-oss): block_m = next power of two of the mean assignments per expert
//                    M * k / E (rounded down, at least 1), clamped to [16, 128]
//                    (triton_kernels/routing.py; matmul_ogs_details/opt_flags.py on NVIDIA).
//   kMarlin          vLLM's fused_marlin_moe (weight-only 4-bit experts: MXFP4 where
//                    triton_kernels is not used, AWQ / GPTQ MoE): the smallest block_size_m
//                    of 8, 16, 32, 48, 64 with M * k / E / block_size_m < 0.9, else 64
//                    (vllm/model_executor/layers/fused_moe/fused_marlin_moe.py, "M block size
//                    selection logic"; the rows padded by moe_align_block_size).
// NOTE: Blackwell's MXFP4 path (FlashInfer's TRT-LLM kernels) picks its token tile by the same
// rule clamped to [8, 64]; it is not distinguished here.
//
// Expected rows: each of the M tokens picks k distinct experts of E uniformly, so one expert's
// assignment count X is Binomial(M, k / E), and the rows over all experts are
// E * B * E[ceil(X / B)] = E * B * sum_{j >= 0} P(X > j B). The tail probabilities are summed
// exactly for a mean of at most kExactMeanLimit assignments per expert, and from the normal
// approximation (continuity-corrected) above it, where it is accurate to well under 1 %.
#pragma once

#include <cstdint>

namespace vramsim::serving {

enum class MoeKernel {
  kTritonFusedMoe,
  kMatmulOgs,
  kMarlin,
};

/// The block of rows `kernel` pads each expert's assignments to, for a step of `num_tokens`
/// tokens each routed to `top_k` of `num_experts` experts. Requires num_tokens >= 1 and
/// 1 <= top_k <= num_experts.
std::int64_t moe_block_rows(MoeKernel kernel, std::int64_t num_tokens, std::int64_t top_k,
                            std::int64_t num_experts);

/// Expected rows computed over all `num_experts` experts, padding included, for `num_tokens`
/// tokens routed uniformly to `top_k` distinct experts each, in blocks of `block_rows`; 0 for
/// no tokens. At least num_tokens * top_k.
double expected_moe_rows(std::int64_t num_tokens, std::int64_t top_k, std::int64_t num_experts,
                         std::int64_t block_rows);

/// expected_moe_rows with moe_block_rows' block, over the num_tokens * top_k routed rows: the
/// factor by which padding multiplies the routed experts' arithmetic (>= 1; 1 for no tokens).
double moe_padding_factor(MoeKernel kernel, std::int64_t num_tokens, std::int64_t top_k,
                          std::int64_t num_experts);

}  // namespace vramsim::serving
