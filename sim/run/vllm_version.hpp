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
//     than A100, else 2048 / 256) hold for every modelled release (0.9.0 on).
// Releases before 0.9.0 (the V0 engine by default up to 0.7, and other batch defaults) are
// refused rather than answered with a later release's rules.
#pragma once

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
/// The oldest release modelled.
inline constexpr VllmVersion kOldestModelledVllm{0, 9, 0};
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
};

VllmBehaviour vllm_behaviour(const VllmVersion& v);

}  // namespace vramsim::run
