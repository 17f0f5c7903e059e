// The compute side of a block's costs (plan_stages, stage_plan.cpp; the formulas in the
// step_graph.hpp comment): the GEMMs of each decoder layer on one TP rank by shape, the
// attention core (flash, or eager's s x s scores), the memory-bound kernels by bytes moved as
// the plan's Kernels run them, LoRA's adapter GEMMs and dequantization, and what a backward
// recomputes. Every time comes from the one cost model (sim/cost/cost_model.hpp), which also
// says where each estimate came from (measured, interpolated, scaled or datasheet).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/block_shape.hpp"
#include "sim/training/layer_memory.hpp"
#include "sim/training/lora.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training::detail {

/// The dtype the plan's matmuls run in: fp32, or fp16 / bf16 for the mixed precisions.
DType compute_dtype(Precision p);

/// `count` identical matrices of one shape on this TP rank: C[m x n] = A[m x k] W[k x n].
struct Gemm {
  std::int64_t m = 0, n = 0, k = 0;
  double count = 1;
};

/// What a block computes for one micro-batch in forward: its matmuls, the attention core (over
/// `attention_pairs` query-key pairs of the micro-batch), and the memory-bound kernels between.
struct BlockWork {
  std::vector<Gemm> gemms;
  double attention_pairs = 0;
  Bytes elementwise;  // bytes read + written by norms, rotary, activations, residual adds
  /// Those bytes in backward where they are not twice the forward's (the loss).
  std::optional<Bytes> backward_elementwise = std::nullopt;
  /// Attention::kEager: `score_matrices` (b x heads on this rank) of seq x seq scores, each
  /// Q K^T and P V a GEMM with head_dim; 0 for flash attention (attention_pairs above).
  std::int64_t score_matrices = 0;
  std::int64_t seq = 0, head_dim = 0;
};

/// Times blocks through the cost model and counts where each estimate came from. Keeps a
/// reference: `cm` must outlive it.
class BlockCoster {
 public:
  BlockCoster(const cost::CostModel& cm, DType dtype, std::int64_t element_bytes, bool dropout,
              cost::PrefillAttention attention)
      : cm_(cm), dtype_(dtype), e_(element_bytes), dropout_(dropout), attention_(attention) {}

  /// The matmuls in forward, or (no matmuls) reading `weights` once.
  Duration linear_forward(const BlockWork& w, Bytes weights);
  /// The input-gradient GEMM of every weight, or (no matmuls) reading and writing `weights`.
  Duration input_gradients(const BlockWork& w, Bytes weights);
  /// The weight-gradient GEMM of every weight (what Megatron overlaps the backward TP
  /// collectives with); zero without matmuls.
  Duration weight_gradients(const BlockWork& w);
  /// The attention core's forward: eager's two GEMMs per score matrix and its softmax (and
  /// dropout) bytes, or flash attention over `w.attention_pairs`; zero without attention.
  Duration attention_forward(const BlockWork& w);
  /// The attention core's backward: eager's four gradient GEMMs and the softmax (and dropout)
  /// backward bytes, or twice flash attention's forward.
  Duration attention_backward(const BlockWork& w);
  Duration memory_bound(Bytes moved) { return take(cm_.memory_bound(moved)); }

  cost::BasisCounts counts;

 private:
  Duration take(const cost::TimeEstimate& e) {
    counts.add(e.basis);
    return e.time;
  }
  static Bytes score_bytes(const BlockWork& w, std::int64_t per_score) {
    return Bytes(w.score_matrices * w.seq * w.seq * per_score);
  }
  const cost::CostModel& cm_;
  DType dtype_;
  std::int64_t e_;
  bool dropout_;
  cost::PrefillAttention attention_;
};

/// The matmul weights of each decoder layer on one TP rank, m left to the caller: dense weights
/// with m = the micro-batch's tokens, routed experts (`routed`) with their share of them.
struct LayerGemm {
  std::int64_t n = 0, k = 0;
  double count = 1;
  double routed_share = 0;  // > 0: a routed expert, m = tokens * routed_share
};

/// Each decoder layer's matmul weights on a rank of `tp` x `ep`, equal shapes merged. Under
/// expert parallelism (`ep` > 1) each rank holds copies / ep of a layer's routed experts, and
/// each of those receives the routed tokens of all ep ranks (balanced routing: every expert gets
/// tokens * top_k / E of each rank), so its share of one rank's tokens is ep * top_k / E;
/// `routed_load` scales the busiest rank's routed tokens (TrainingPlan::moe_routed_load).
std::vector<std::vector<LayerGemm>> layer_gemms(const model::ModelSpec& spec, int tp, int ep,
                                                double routed_load);

/// The routed experts' parameters of each decoder layer (all experts, unsharded).
std::vector<std::int64_t> routed_expert_params(const model::ModelSpec& spec);

/// `layer`'s GEMMs with m set for a micro-batch of `tokens` (a routed expert's share of them,
/// at least 1).
std::vector<Gemm> with_tokens(const std::vector<LayerGemm>& layer, std::int64_t tokens);

/// Forward bytes a decoder layer's memory-bound kernels read and write per token, as `kernels`
/// run them (the kernel-by-kernel account is at the definition); `h_rep` is h, or h / t under
/// sequence parallelism; `moe_layer` adds the token dispatch.
std::int64_t elementwise_bytes_per_token(const model::ModelSpec& spec, Kernels kernels,
                                         std::int64_t e, std::int64_t h_rep, std::int64_t t,
                                         bool moe_layer);

/// The matmuls `selective-op` recomputes (activation_memory.hpp, part 3) and the weights they
/// read.
struct SelectiveOpWork {
  BlockWork work{{}, 0.0, Bytes(0)};
  Bytes weights;
};
/// Under CheckpointKind::kSelectiveOp the odd positions of the layer's call order, each once,
/// on the whole micro-batch (tp = 1); nothing otherwise.
SelectiveOpWork selective_op_work(const model::ModelSpec& spec, const TrainingPlan& plan,
                                  const BlockShape& shape);

/// The parts of a block's compute that its model-parallel exchanges overlap or follow.
struct BlockComputeTimes {
  Duration attention;           // the attention core's forward
  Duration attention_backward;  // and its backward
  Duration weight_gradients;    // what Megatron overlaps the backward TP reductions with
};

/// Sets `c.forward` and `c.backward` from the block's forward work `fwd` and its `weights` (the
/// bytes a block without matmuls reads). LoRA (`lb` set): the frozen base's matmuls run forward
/// and input-gradient GEMMs only (no weight gradients; a frozen lookup has no backward at all),
/// the adapters their three small GEMMs each of `lora_rank`, and a quantized base is dequantized
/// to the compute dtype before each use, in forward and again in backward (bitsandbytes'
/// matmul_4bit / MatMul8bitLt): read the stored bytes, write the dequantized weight, a
/// memory-bound pass.
BlockComputeTimes cost_block_compute(BlockCoster& coster, BlockCosts& c, const BlockWork& fwd,
                                     Bytes weights, const LoraBlock* lb, std::int64_t lora_rank,
                                     const BlockShape& shape);

/// What the block's backward runs of its forward again under `recompute`: `c`'s forward with
/// its TP, CP and EP exchanges (set before), the attention core (`attention`; under ring CP its
/// exchange too), or selective-op's matmuls (`op`) and the memory-bound ops of `fwd`.
Duration recompute_time(Recompute recompute, const BlockCosts& c, Duration attention,
                        const BlockShape& shape, BlockCoster& coster, const SelectiveOpWork& op,
                        const BlockWork& fwd);

}  // namespace vramsim::training::detail
