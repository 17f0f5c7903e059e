// The datasheet roofline step-time model: the default ExecutionTimeModel.
//
// Per pipeline stage, on one TP rank, for a step of T tokens (prefill chunk tokens plus one
// per decode) and R logit rows (one per decode and per prefill chunk; NOTE: vLLM computes
// logits only for a chunk that completes its prompt, BatchShape does not say which does):
//
//   linear     each group of matmuls with one arithmetic intensity is its own roofline,
//                max(FLOPs / (peak * matmul_eff), bytes read / (bandwidth * memory_eff)):
//                dense     2 * (active matmul weights of the stage's layers on this rank) * T,
//                          all of their bytes read once
//                experts   2 * (top-k routed expert weights) * T times the fused MoE kernel's
//                          row padding (moe_row_padding.hpp: each expert's tokens rounded up
//                          to the kernel's block of rows), and the bytes of the experts
//                          the step touches: E * (1 - (1 - k/E)^T) of E per MoE layer, the
//                          expected number of distinct experts hit by T tokens each picking k
//                          of E uniformly (expected_experts_touched below); it saturates at E
//                lm_head   (last stage) 2 * embed_dim * vocab/tp * R, its bytes read once
//              Embedding lookups read T rows of the table: counted as nothing. Activation
//              traffic (reading and writing T x hidden tensors) is ignored: it is < 1 % of the
//              weight bytes for T < 100 and the step is compute-bound long before it matters.
//   attention  prefill: a chunk of n tokens after c cached attends, on a global layer,
//                sum_{p=c}^{c+n-1} (p + 1) = n*c + n(n+1)/2 tokens, on a sliding layer of window
//                w the same sum with each term capped at w; FLOPs = that * the per-attended-token
//                FLOPs of flop_count.hpp / tp; it also reads the cached KV, min(c, w) tokens per
//                layer. Time = max(FLOPs / (peak * prefill_attn_eff), KV bytes / (bw *
//                memory_eff)) over all chunks of the step together (one varlen kernel per layer,
//                as vLLM V1 runs them).
//              decode: the KV read, decode_context_tokens tokens per global layer and
//                num_decodes * min(decode_context_tokens / num_decodes, w) per sliding layer,
//                times the layer's KV bytes per token on this device (kv_cache_shape.hpp);
//                time = max(bytes / (bw * decode_attn_eff), FLOPs / (peak * prefill_attn_eff)).
//              Prefill and decode attention are separate kernels in time, so they add.
//   communication  tp > 1: two all-reduces per decoder layer (after attention and after the
//              MLP: vLLM's RowParallelLinear) of T * hidden * activation bytes, each costed by
//              comm::collective_time over comm::intra_node_link(device), whose bandwidth is
//              scaled by pcie_collective_efficiency when that link is PCIe. Its per-hop latency
//              dominates small decode batches, which is why a second GPU behind PCIe loses for
//              a small model. NOTE: the embedding's all-reduce (VocabParallelEmbedding) and the
//              logits gather are left out (one more all-reduce of the same size, < 2 % of them).
//              pp > 1: pp - 1 sends of the intermediate tensors between consecutive stages,
//              hidden_states and residual (vLLM's IntermediateTensors for the Llama family):
//              2 * T * hidden * activation bytes, comm::collective_time(kSendRecv, ..., 2, link).
//   data-parallel MoE group (expert_parallel.hpp; only with an MoE model and D > 1): the
//              dense layers, attention and lm_head run this rank's batch (padded to the
//              group's largest, BatchShape::dp_padded_tokens); the routed experts run the
//              whole group's tokens (dp_group_tokens) on this rank's share: with EP its
//              local_num_experts whole experts (the DP rank's first TP rank, which holds the
//              most), FLOPs = routed_assignments(...) x 2 x (one expert's weights), bytes = its
//              experts touched, local x (1 - (1 - k/E)^T); without EP all E experts split
//              D x tp ways, FLOPs = T x k x 2 x (one expert's shard). Communication adds, per
//              MoE layer, moe_exchange_time over the same link as the all-reduces.
//              Each GEMM kernel also pays gemm_kernel_fixed (4.7 us: its setup, ramp and tail,
//              cost/datasheet_constants.hpp), gemm_kernels_per_layer() of them per decoder
//              layer and one for the lm_head, whatever the batch: it dominates the GEMMs of
//              small weight matrices at decode.
//   kernel gaps  the stage's kernels x kernel_gap (GPU time between two kernels of a CUDA
//              graph, cost/datasheet_constants.hpp), each step whatever its batch; a decoder
//              layer runs kernels_per_layer() kernels (roofline_time_model.cpp). Its
//              element-wise and attention kernels (those neither GEMMs nor all-reduces) also
//              pay small_kernel_fixed each (3 us), the shortest time such a kernel takes.
//   overhead   step_overhead + per_sequence_overhead * (chunks + decodes)
//              + launch_per_layer * num_layers, once per step (roofline_options.hpp).
//
// StepTime: linear, attention, communication and kernel gaps are summed over the stages (each
// stage's linear and attention rounded to ns once), so linear + attention + communication +
// kernel_gaps + overhead == total for every pp. stage_interval is the slowest stage plus the
// overhead (== total when pp == 1): the replica can put the next batch into the first stage
// after it.
//
// The constructor precomputes everything per stage (a sum over weight_tensors(), checked against
// weight_bytes_on_stage); step_time loops over the prefill chunks and a few layer classes (one per
// distinct sliding window), never over layers, and allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/comm/collective.hpp"
#include "sim/core/dtype.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/attention_classes.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/expert_parallel.hpp"
#include "sim/serving/mixed_batch_attention.hpp"
#include "sim/serving/moe_row_padding.hpp"
#include "sim/serving/roofline_options.hpp"

namespace vramsim::serving {

/// Expected number of distinct experts that `num_tokens` tokens touch when each picks `top_k`
/// distinct experts of `num_experts` uniformly and independently: E * (1 - (1 - k/E)^T).
/// 0 for no tokens, top_k for one, approaching E. Requires 1 <= top_k <= num_experts.
double expected_experts_touched(std::int64_t num_experts, std::int64_t top_k,
                                std::int64_t num_tokens);

/// Kernels one decoder layer runs in a vLLM forward step on one device at tensor parallelism
/// `tp`: 10 for a dense layer, 14 for a routed MoE one, 2 more all-reduces at tp > 1.
std::int64_t kernels_per_layer(const model::LayerSpec& layer, int tp);

/// Of those, the GEMMs: QKV, output, gate/up and down (dense: 4); QKV, output, router and the
/// two grouped expert GEMMs (routed MoE: 5).
std::int64_t gemm_kernels_per_layer(const model::LayerSpec& layer);

class RooflineTimeModel final : public ExecutionTimeModel {
 public:
  /// The largest number of distinct sliding windows (0 = global counts as one) a model may use.
  static constexpr std::size_t kMaxAttentionClasses = cost::kMaxAttentionClasses;

  /// Throws ConfigError when `par` cannot split `spec` (model::check_parallelism), `options`
  /// fail validate() (fields under "roofline") or `ep` does (ExpertParallelSetup::validate).
  /// `ep` matters only for an MoE model with ep.data_parallel_size > 1 (see the file comment).
  RooflineTimeModel(const model::ModelSpec& spec, const hardware::DeviceSpec& device,
                    model::Parallelism par, const model::WeightFormat& weights, DType kv_dtype,
                    const RooflineOptions& options = {}, const ExpertParallelSetup& ep = {});

  StepTime step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  /// Weight bytes one device of stage `pp_rank` reads in a step of `num_tokens` tokens with
  /// `num_logit_rows` logit rows (see the file comment; experts expected, hence rounded).
  Bytes weight_bytes_read(std::int64_t num_tokens, std::int64_t num_logit_rows,
                          int pp_rank) const;

  model::Parallelism parallelism() const { return par_; }
  /// Whether steps are those of a lock-stepped data-parallel MoE group (see the file comment).
  bool dp_group() const { return dp_group_; }
  const RooflineOptions& options() const { return options_; }

 private:
  // What one device of one pipeline stage computes and reads, per token or per step (its
  // attention layers by class: attention_.stages at the same index).
  struct Stage {
    double dense_flops_per_token = 0;
    double dense_bytes = 0;
    double expert_flops_per_token = 0;  // top-k routed experts, all MoE layers of the stage
    double expert_bytes = 0;            // every routed expert of the stage
    double lm_head_flops_per_row = 0;   // last stage only
    double lm_head_bytes = 0;
    double dense_read_s = 0;    // dense_bytes / weight_bandwidth_: the same every step
    double lm_head_read_s = 0;  // lm_head_bytes / weight_bandwidth_
    Duration kernel_gaps;  // its layers' kernels x kernel_gap + small kernels x small_kernel_fixed
    Duration gemm_fixed;   // its GEMM kernels (layers, lm_head) x options_.gemm_kernel_fixed
  };

  // A data-parallel MoE group's routed experts on one device of a stage (dp_group_ only).
  struct GroupStage {
    std::int64_t moe_layers = 0;
    double flops_per_assignment = 0;  // one token through one expert, every MoE layer
    double bytes_per_expert = 0;      // one expert's share on the device, every MoE layer
  };

  struct StageSeconds {
    double linear = 0;
    double attention = 0;
  };
  StageSeconds stage_seconds(const Stage& s, const cost::StageAttention& a,
                             std::int64_t num_tokens, std::int64_t logit_rows,
                             double expert_fraction, double expert_padding,
                             const double* prefill_attended,
                             const double* prefill_cached, const double* decode_attended,
                             double decode_kv_factor) const;

  // `padding`: moe_padding_factor of the group's tokens, the same for every stage.
  double group_expert_seconds(const GroupStage& g, std::int64_t group_tokens,
                              std::int32_t dp_rank, double padding) const;

  model::Parallelism par_;
  RooflineOptions options_;
  std::vector<Stage> stages_;
  cost::AttentionClasses attention_;  // layer classes by sliding window, per stage
  std::int64_t hidden_size_ = 0;
  std::int64_t num_layers_ = 0;
  std::int64_t activation_bytes_ = 2;
  std::int64_t num_experts_ = 0;  // 0: dense model
  std::int64_t top_k_ = 0;
  MoeKernel moe_kernel_ = MoeKernel::kTritonFusedMoe;  // the kernel of the routed experts
  double matmul_rate_ = 0;      // FLOP/s, efficiency applied
  double expert_matmul_rate_ = 0;  // the routed experts' (matmul_rate_ but for Hopper MXFP4)
  double attention_rate_ = 0;   // FLOP/s, efficiency applied
  double weight_bandwidth_ = 0; // B/s, memory efficiency applied
  double decode_kv_bandwidth_ = 0;  // B/s, decode attention efficiency applied
  double prefill_attn_flops_per_token_ = 0;  // per layer per attended token, on one TP rank
  double decode_attn_flops_per_token_ = 0;
  comm::LinkModel link_;
  comm::CollectiveCost tp_all_reduce_;  // over the TP group (none at TP = 1)
  comm::CollectiveCost stage_send_;     // between two pipeline stages
  std::string description_;
  bool dp_group_ = false;
  ExpertParallelSetup ep_;
  int ep_size_ = 1;
  std::vector<GroupStage> group_stages_;
  std::vector<std::int64_t> local_experts_;  // per DP rank: its busiest device's experts
  std::optional<MixedBatchDecode> mixed_decode_;  // decodes beside a prefill chunk (FA2 parts)
};

/// The default time model: a RooflineTimeModel behind the interface. Throws like its
/// constructor.
std::unique_ptr<ExecutionTimeModel> make_roofline_time_model(
    const model::ModelSpec& spec, const hardware::DeviceSpec& device, model::Parallelism par,
    const model::WeightFormat& weights, DType kv_dtype, const RooflineOptions& options = {},
    const ExpertParallelSetup& ep = {});

}  // namespace vramsim::serving
