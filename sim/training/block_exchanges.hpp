// The communication side of a block's costs (plan_stages, stage_plan.cpp): the collectives a
// block runs for one micro-batch and the part of them its compute does not hide.
//   tensor parallelism    Megatron-LM's all-reduces (or SP's all-gathers and reduce-scatters)
//                         per decoder layer; in backward only what outlasts the weight-gradient
//                         GEMMs is exposed
//   context parallelism   the ring's K/V sends not hidden by attention, or Ulysses' all-to-alls
//   expert parallelism    the token dispatch and combine all-to-alls of an MoE layer
//   data parallelism      ZeRO-3 / FSDP's parameter all-gather and the gradient reduce-scatter
//                         (HSDP's replica all-reduce), with offloaded parameters' host and NVMe
//                         copies
// Every collective is costed through the plan's PlanCollectives (cluster_links.hpp).
#pragma once

#include "sim/comm/collective.hpp"
#include "sim/core/units.hpp"
#include "sim/training/block_compute.hpp"
#include "sim/training/block_shape.hpp"
#include "sim/training/cluster_links.hpp"
#include "sim/training/lora.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training::detail {

/// The exchanges of every block of one plan, each collective of a fixed size costed once, at
/// construction. Keeps references: `setup` and `collectives` must outlive it.
class BlockExchanges {
 public:
  BlockExchanges(const TrainingSetup& setup, PlanCollectives& collectives,
                 const BlockShape& shape);

  /// A decoder layer's TP, CP and EP exchanges, forward and backward, given the compute they
  /// overlap (`compute`); nothing for the embedding and the head.
  void add_model_parallel(BlockCosts& c, const BlockComputeTimes& compute) const;

  /// The data-parallel side: `c.gathered` and `c.all_gather` where the strategy gathers
  /// parameters (its `weights` less the persistent ones), `c.full_grads` and
  /// `c.reduce_scatter` where it shards gradients (LoRA, `lb` set: only blocks that train).
  void add_data_parallel(BlockCosts& c, Bytes weights, const LoraBlock* lb);

 private:
  Duration fetch_shard(Bytes shard_bytes) const;
  Duration ring_exposed(Duration send, Duration attention) const;
  Duration tp_backward_exposed(Duration weight_gradients) const;

  const TrainingSetup& setup_;
  PlanCollectives& collectives_;
  BlockShape shape_;
  Duration tp_all_gathers_, tp_reductions_;
  Duration ring_forward_send_, ring_backward_send_, ulysses_pass_, ep_pass_;
  comm::LinkModel host_;
  bool params_offloaded_ = false;
};

}  // namespace vramsim::training::detail
