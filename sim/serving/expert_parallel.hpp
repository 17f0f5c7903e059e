// Data parallelism and expert parallelism of an MoE model in serving, as vLLM runs them
// (--data-parallel-size D, --enable-expert-parallel; docs/serving/data_parallel_deployment.md):
//
//   * Each of the D DP ranks is an engine of its own (tp x pp devices): its own scheduler, KV
//     cache and batch, its own copy of the attention and dense weights.
//   * The MoE layers see one group of D x tp devices (memory::MoeSplit): with EP each device
//     holds a contiguous range of whole experts (memory::local_num_experts); without it every
//     expert is tensor-parallel over the whole group.
//   * The ranks step in lock-step: every MoE layer exchanges tokens across the group, so when
//     any rank has work, the ranks without any run a dummy forward pass (vLLM's DP coordinator
//     and execute_dummy_batch), and a step of the group lasts as long as its slowest rank.
//     Dense models need none of this: vLLM runs their DP ranks as independent engines.
//   * Per MoE layer the tokens are dispatched to the devices holding their experts and the
//     expert outputs combined back. vLLM's default all2all backend (ParallelConfig.
//     all2all_backend = "allgather_reducescatter", vllm/distributed/device_communicators/
//     all2all.py AgRsAll2AllManager) all-gathers every rank's hidden states and router logits
//     over the DP group and reduce-scatters the outputs; the DeepEP and pplx kernels instead
//     send each token to the ranks of its top-k experts (an all-to-all of routed tokens).
//   * vLLM pads every rank's batch to the group's largest (gpu_model_runner get_dp_padding,
//     unless enforce_eager), so that all ranks run the same CUDA graph and exchange equal chunks.
//
// This file holds the settings and the cost of the dispatch and combine; the step-time model
// (roofline_time_model.hpp) uses them, the simulation driver steps the ranks together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/comm/collective.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace vramsim::serving {

/// vLLM's --all2all-backend: how an MoE layer moves tokens across the EP / DP group.
enum class All2AllBackend {
  kAllgatherReducescatter,
  kDeepepHighThroughput,
  kDeepepLowLatency,
  kPplx,
};
inline constexpr auto kAll2AllBackends = enum_table<All2AllBackend>({
    {All2AllBackend::kAllgatherReducescatter, "allgather_reducescatter",
     "vLLM's default: all-gather every rank's tokens, reduce-scatter the outputs"},
    {All2AllBackend::kDeepepHighThroughput, "deepep_high_throughput",
     "DeepEP's all-to-all of the routed tokens (top-k copies of each)"},
    {All2AllBackend::kDeepepLowLatency, "deepep_low_latency",
     "DeepEP's low-latency all-to-all of the routed tokens (costed like the other)"},
    {All2AllBackend::kPplx, "pplx", "pplx-kernels' all-to-all of the routed tokens"},
});
static_assert(covers_every_enumerator(kAll2AllBackends) && names_are_unique(kAll2AllBackends));

std::string_view to_string(All2AllBackend b);
std::optional<All2AllBackend> all2all_backend_from_string(std::string_view text);
/// "allgather_reducescatter, deepep_high_throughput, ..." for messages.
std::string_view all2all_backend_names();

/// The data-parallel MoE group as the step-time model sees it. Default: none (D = 1, no EP).
struct ExpertParallelSetup {
  int data_parallel_size = 1;
  bool enable_expert_parallel = false;
  All2AllBackend backend = All2AllBackend::kAllgatherReducescatter;
  /// The busiest expert's tokens over the mean tokens per expert in a step (>= 1): the EP rank
  /// holding it computes that many times its fair share. 1, the default, is perfectly uniform
  /// routing: the lower bound. NOTE: measured routing is skewed. DeepSeek-V3's report
  /// (arXiv:2412.19437, section 3.4) keeps redundant copies of high-load experts because of
  /// it, and vLLM's EPLB (--enable-eplb) logs this very "balancedness" (mean / max load); the
  /// ratio depends on the model, the data and the batch, so it is an input, not a constant.
  double expert_load_imbalance = 1.0;
  /// Whether the group exists: an MoE model with D > 1 (dense models' DP ranks are independent).
  bool lockstep(bool is_moe) const { return is_moe && data_parallel_size > 1; }
  /// Problems under `at` ("engine.data_parallel_size", "engine.expert_load_imbalance").
  void validate(ValidationReport& report) const;
};

/// The time of one MoE layer's token exchange on one device.
struct MoeExchange {
  Duration dispatch;
  Duration combine;
  Duration total() const { return dispatch + combine; }
};

/// What one MoE layer moves, for moe_exchange_time.
struct MoeExchangeShape {
  std::int64_t rank_tokens = 0;   // tokens of this DP rank in the step (after padding)
  std::int64_t group_tokens = 0;  // tokens of the whole DP group (every rank's, padded)
  std::int64_t hidden_size = 0;
  std::int64_t num_experts = 0;
  std::int64_t top_k = 0;
  std::int64_t activation_bytes = 2;
};

/// Dispatch and combine of one MoE layer over `group_size` devices connected by `link`
/// (comm::collective_time, the shared alpha-beta ring model):
///   allgather_reducescatter  dispatch: all-gather of group_tokens x (hidden + num_experts)
///                            activations (the hidden states and the router logits);
///                            combine: reduce-scatter of group_tokens x hidden
///   deepep_*, pplx           dispatch and combine: all-to-all of each rank's routed tokens,
///                            rank_tokens x top_k x hidden activations sent per rank
/// Zero when group_size is 1. Requires non-negative counts.
MoeExchange moe_exchange_time(All2AllBackend backend, const MoeExchangeShape& shape,
                              int group_size, const comm::LinkModel& link);

/// Token-expert assignments the busiest device of an EP group computes in a step:
/// group_tokens x top_k spread over num_experts experts, of which the device holds
/// local_experts, scaled by the load imbalance and capped at every token hitting
/// min(top_k, local_experts) of them.
double routed_assignments(std::int64_t group_tokens, std::int64_t top_k,
                          std::int64_t num_experts, std::int64_t local_experts,
                          double load_imbalance);

}  // namespace vramsim::serving
