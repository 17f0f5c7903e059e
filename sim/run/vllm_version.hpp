// The vLLM release being modelled (--vllm-version) and what it changes in the accounting.
//
// Releases differ in ways that move the start-up KV-cache figure and the defaults a user gets
// without setting anything. What is modelled, by release (each boundary cited where it is
// decided, vllm_behaviour in vllm_version.cpp):
//   - the dummy sampler run of the profile: FlashInfer's top-k/top-p kernel where FlashInfer is
//     installed up to 0.11.0, else the sort-based path up to 0.16, the Triton kernel with its
//     per-SM buffer from 0.17 (memory::SamplerKind);
//   - the start-up CUDA-graph memory profile (a dummy capture inside the memory-profiling window,
//     from 0.17.1, whether or not its estimate is subtracted), which leaves memory outside
//     PyTorch that the non-torch figure shows;
//   - CUDA-graph memory: estimated during profiling and subtracted from the KV cache from 0.21
//     (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default); before, the graphs are captured
//     outside gpu_memory_utilization's share and reported beside it;
//   - admission: from 0.19 a waiting request is admitted only when blocks for its whole
//     sequence are free (scheduler_reserve_full_isl, serving::SchedulerLimits);
//   - async scheduling (--async-scheduling): on by default from 0.14 (serving::ReplicaConfig);
//   - the MXFP4 MoE kernel on Hopper: fused_marlin_moe up to 0.11.0, triton_kernels' matmul_ogs
//     from 0.11.1 (serving::RooflineOptions::mxfp4_triton_kernels);
//   - the batch defaults of `vllm serve` (8192 tokens / 1024 sequences on >= 70 GiB parts other
//     than A100, else 2048 / 256) hold for every modelled V1 release (0.9.0 on);
//   - the engine: V0 by default up to 0.7, V1 from 0.8.0. A V0 release (0.6.0 to 0.7.x) runs
//     the `vllm-v0` scheduler with V0's defaults (chunked prefill only for max_model_len > 32K,
//     512 or 2048 tokens with it and max(max_model_len, 2048) without, 256 sequences, no
//     prefix caching; vllm_v0_defaults); its start-up memory profile is not modelled, so
//     `budget` refuses it and `serve` sizes its KV cache with 0.9.0's rules, saying so.
// Releases before 0.6.0 and the 0.8.x releases (V1 with batch defaults that changed within
// 0.8) are refused rather than answered with another release's rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/memory/activation_profile.hpp"

namespace vramsim::run {

struct VllmVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const VllmVersion&) const = default;
};

/// The newest release the start-up accounting is validated against
/// (tests/validation/vllm_startup_logs.csv) and the default of --vllm-version.
inline constexpr VllmVersion kNewestValidatedVllm{0, 19, 0};
/// The oldest release modelled (the V0 engine, vllm-v0 scheduler).
inline constexpr VllmVersion kOldestModelledVllm{0, 6, 0};
/// The first release whose default engine is V1 (vllm-project/vllm PR #13726, "We have now
/// enabled V1 engine by default", the 0.8.0 release notes; VLLM_USE_V1=0 chose V0).
inline constexpr VllmVersion kFirstV1DefaultVllm{0, 8, 0};
/// The oldest V1 release modelled: 0.8.x is refused (its batch defaults changed within 0.8:
/// 2048 / 256 for `vllm serve` on every GPU, then larger ones for H100/H200 by device name,
/// before 0.9's >= 70 GiB rule, vllm-project/vllm PR #17885), and its start-up rules are
/// those of kOldestModelledV1Vllm for the V0 releases whose KV cache serve sizes.
inline constexpr VllmVersion kOldestModelledV1Vllm{0, 9, 0};
/// The newest release whose differences from kNewestValidatedVllm are modelled (0.21's CUDA-graph
/// estimate); later ones are answered with its rules, and the answer says so.
inline constexpr VllmVersion kNewestModelledVllm{0, 21, 0};

/// "0.19", "0.19.1", "v0.19.0", "0.19.0rc1", "0.10.1.post1", "0.10.1.1" (the release part is
/// kept; pre- and post-release suffixes and a hot-fix fourth number are ignored). nullopt when the text is not a version.
std::optional<VllmVersion> parse_vllm_version(std::string_view text);

std::string to_string(const VllmVersion& v);

/// What the modelled release changes in the budget.
struct VllmBehaviour {
  /// The sampler where FlashInfer is not installed (or not used by default).
  memory::SamplerKind sampler = memory::SamplerKind::kTritonTopKTopP;
  bool flashinfer_sampler = false;  // samples with FlashInfer's kernel when it is installed
  bool profiles_cuda_graph_memory = true;  // captures dummy CUDA graphs while profiling
  bool estimates_cuda_graphs = false;  // subtracts the CUDA-graph estimate from the KV cache
  bool reserve_full_isl = false;       // admits a request only when its whole sequence fits
  bool async_scheduling = false;       // --async-scheduling on unless a setting turns it off
  bool async_scheduling_with_pp = false;  // async scheduling runs with pipeline parallelism
  bool mxfp4_triton_kernels = false;  // MXFP4 MoE on Hopper through triton_kernels' matmul_ogs
  bool v1_engine = true;                // V1 is the default engine (else V0, vllm-v0)
  bool prefix_caching_by_default = true;  // --enable-prefix-caching on unless turned off
};

VllmBehaviour vllm_behaviour(const VllmVersion& v);

/// "vLLM 0.6.3, V0 engine" / "vLLM 0.19.0, V1 engine" for --vllm-version `text`; "vLLM
/// <text>" when it is not a version.
std::string engine_description(std::string_view text);

/// Why `v` is not modelled (releases before kOldestModelledVllm, and 0.8.x), naming the
/// modelled ranges; "" when it is modelled.
std::string unmodelled_release(const VllmVersion& v);

/// A V0 release's engine defaults for what the user left unset (vllm/engine/arg_utils.py and
/// vllm/config.py, SchedulerConfig, of that release).
struct VllmV0Defaults {
  bool enable_chunked_prefill = false;
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 256;
};

/// `chunked_given`: the user's --enable-chunked-prefill (nullopt: unset, V0's rule decides).
/// `lora` and `speculative`: --enable-lora and a --speculative-config, which keep V0's
/// automatic chunked prefill off.
VllmV0Defaults vllm_v0_defaults(const VllmVersion& v, std::int64_t max_model_len,
                                std::optional<bool> chunked_given, bool lora, bool speculative);

}  // namespace vramsim::run
