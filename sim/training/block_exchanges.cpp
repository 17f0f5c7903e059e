// block_exchanges.hpp: the TP, CP, EP and data-parallel collectives of a block.
#include "sim/training/block_exchanges.hpp"

#include <algorithm>
#include <cmath>

#include "sim/model/model_spec.hpp"
#include "sim/training/model_state.hpp"

namespace vramsim::training::detail {

namespace {

bool gathers_params(Strategy s) { return sharded_parts(s).params; }

}  // namespace

BlockExchanges::BlockExchanges(const TrainingSetup& setup, PlanCollectives& collectives,
                               const BlockShape& shape)
    : setup_(setup), collectives_(collectives), shape_(shape) {
  const model::ModelSpec& spec = setup.model;
  const TrainingPlan& plan = setup.plan;
  const std::int64_t t = shape.t, e = shape.e, s = shape.s, b = shape.b;
  // Megatron TP: 2 all-reduces per layer in forward and 2 in backward of s b h activations, or
  // with sequence parallelism 2 all-gathers + 2 reduce-scatters each way (same bytes on wire).
  const Bytes tp_message(e * s * b * spec.hidden_size);
  tp_all_gathers_ = plan.sequence_parallel
                        ? 2 * collectives.tp(comm::Collective::kAllGather, tp_message)
                        : Duration::zero();
  tp_reductions_ = plan.sequence_parallel
                       ? 2 * collectives.tp(comm::Collective::kReduceScatter, tp_message)
                       : 2 * collectives.tp(comm::Collective::kAllReduce, tp_message);
  // Context parallelism's exchange per decoder layer, on the compute stream where it is not
  // hidden:
  //   ring (TransformerEngine's AttnFuncWithCPAndKVP2P, torchtitan's ring attention): cp steps,
  //     each running the local queries against one K/V chunk while the next chunk (K and V of
  //     s tokens of this rank: 2 e s b kv / t bytes) arrives from the previous rank; a step
  //     takes the longer of its attention (1/cp of the local attention) and its transfer, so
  //     (cp - 1) max(0, transfer - attention / cp) is exposed. Backward circulates K, V and
  //     their gradients: twice the bytes against the attention backward.
  //   all-to-all (DeepSpeed-Ulysses, DistributedAttention): Q, K and V each all-to-all'd from
  //     sequence-sharded to head-sharded before attention and the output back after, e s b
  //     (q or kv) / t bytes each; the same four in backward; nothing overlaps them.
  ring_forward_send_ = shape.ring ? collectives.cp_send(shape.kv_chunk) : Duration::zero();
  ring_backward_send_ = shape.ring ? collectives.cp_send(2 * shape.kv_chunk) : Duration::zero();
  ulysses_pass_ =
      shape.ulysses
          ? 2 * collectives.cp_all_to_all(Bytes(e * s * b * ceil_div(spec.q_width(), t))) +
                2 * collectives.cp_all_to_all(Bytes(e * s * b * ceil_div(spec.kv_width(), t)))
          : Duration::zero();
  // Parameter offload (ZeRO-Offload / ZeRO-Infinity offload_param, FSDP CPUOffload): before a
  // block's all-gather its parameter shard (2 or 4 bytes per parameter, / shard) is copied from
  // pinned host memory over the host link, and from NVMe into the host first; after its
  // reduce-scatter the gradient shard goes back down. Both on the communication stream, so the
  // prefetch one block ahead hides them where compute outlasts them (fetch_shard).
  host_ = comm::host_link(setup.device);
  params_offloaded_ = plan.offload_params != OffloadParams::kNone;
  // Expert parallelism: each MoE layer dispatches its tokens' top-k copies to the experts' ranks
  // and combines their outputs back (Megatron-LM's MoEAlltoAllTokenDispatcher): two all-to-alls
  // over the EP group of e s b k h bytes per rank (under SP the rank's s / t tokens), and the
  // same two in backward, not overlapped (Megatron's overlap of them is an option, off by
  // default). NOTE: balanced routing is assumed (every expert receives tokens * top_k / E).
  ep_pass_ =
      plan.ep > 1 && spec.moe
          ? 2 * collectives.ep_all_to_all(Bytes(std::llround(
                    shape.routed_load *
                    static_cast<double>(e * (plan.sequence_parallel ? ceil_div(s * b, t) : s * b) *
                                        spec.moe->num_experts_per_tok * spec.hidden_size))))
          : Duration::zero();
}

// The backward's TP collectives as Megatron-LM runs them (tensor_parallel/layers.py,
// LinearWithGradAccumulationAndAsyncCommunication): the input gradient's all-reduce (SP: its
// reduce-scatter) is issued asynchronously and overlaps the weight-gradient GEMM, so only what
// outlasts that GEMM is exposed; under SP the all-gathers of the saved input that the weight
// gradient needs stay on the critical path.
Duration BlockExchanges::tp_backward_exposed(Duration weight_gradients) const {
  return tp_all_gathers_ + std::max(Duration::zero(), tp_reductions_ - weight_gradients);
}

// The ring's exposed part: (cp - 1) steps of max(0, transfer - attention / cp).
Duration BlockExchanges::ring_exposed(Duration send, Duration attention) const {
  const int cp = setup_.plan.cp;
  const Duration per_step = Duration::from_seconds(attention.seconds() / cp);
  return (cp - 1) * std::max(Duration::zero(), send - per_step);
}

// An offloaded parameter shard up from pinned host memory (and from NVMe into the host first).
Duration BlockExchanges::fetch_shard(Bytes shard_bytes) const {
  if (!params_offloaded_ || shard_bytes <= Bytes(0)) return Duration::zero();
  const TrainingPlan& plan = setup_.plan;
  const Bandwidth nvme = GBps(plan.nvme_gb_per_s);
  Duration d = host_.latency + shard_bytes / host_.bandwidth;
  if (plan.offload_params == OffloadParams::kNvme) d += shard_bytes / nvme;
  return d;
}

void BlockExchanges::add_model_parallel(BlockCosts& c, const BlockComputeTimes& compute) const {
  if (c.layer >= 0 && setup_.plan.tp > 1) {
    c.tp_forward = tp_all_gathers_ + tp_reductions_;
    c.tp_backward = tp_backward_exposed(compute.weight_gradients);
  }
  if (c.layer >= 0 && shape_.ring) {
    c.cp_forward = ring_exposed(ring_forward_send_, compute.attention);
    c.cp_backward = ring_exposed(ring_backward_send_, compute.attention_backward);
  } else if (c.layer >= 0 && shape_.ulysses) {
    c.cp_forward = ulysses_pass_;
    c.cp_backward = ulysses_pass_;
  }
  if (c.layer >= 0 && setup_.model.layers[static_cast<std::size_t>(c.layer)].moe) {
    c.ep_forward = ep_pass_;
    c.ep_backward = ep_pass_;
  }
}

void BlockExchanges::add_data_parallel(BlockCosts& c, Bytes weights, const LoraBlock* lb) {
  const TrainingPlan& plan = setup_.plan;
  const std::int64_t e = shape_.e;
  const int shard = plan.shard_degree();
  const int expert_shard = plan.expert_shard_degree();
  const bool grads_sharded = sharded_parts(plan.strategy).grads;
  // Megatron-LM keeps fp32 main gradients under bf16 (TrainingPlan::grad_element_bytes).
  const std::int64_t grad_bytes = plan.grad_element_bytes();
  // Routed experts (EP) are gathered and reduced over their own group.
  const Bytes expert_weights(c.expert_params * e);
  const Bytes kept_whole(c.persistent_params * e);  // ZeRO-3's persistent parameters
  const Bytes dense_weights = weights - expert_weights - kept_whole;
  c.gathered = gathers_params(plan.strategy) ? weights - kept_whole : Bytes(0);
  c.full_grads = grads_sharded ? Bytes(c.trainable_params * grad_bytes) : Bytes(0);
  const Bytes expert_grads = grads_sharded ? Bytes(c.expert_params * grad_bytes) : Bytes(0);
  if (gathers_params(plan.strategy)) {
    c.all_gather = collectives_.dp(comm::Collective::kAllGather, dense_weights, shard) +
                   collectives_.expert_dp(comm::Collective::kAllGather, expert_weights,
                                          expert_shard) +
                   fetch_shard(Bytes(ceil_div(dense_weights.count(), shard) +
                                     ceil_div(expert_weights.count(), expert_shard)));
  }
  if (grads_sharded && (!lb || c.full_grads > Bytes(0))) {
    const Bytes dense_grads = c.full_grads - expert_grads;
    c.reduce_scatter =
        collectives_.dp(comm::Collective::kReduceScatter, dense_grads, shard) +
        collectives_.expert_dp(comm::Collective::kReduceScatter, expert_grads, expert_shard);
    if (params_offloaded_) {  // the gradient shard down to the host
      const Bytes down(ceil_div(dense_grads.count(), shard) +
                       ceil_div(expert_grads.count(), expert_shard));
      c.reduce_scatter += host_.latency + down / host_.bandwidth;
    }
    if (plan.strategy == Strategy::kHsdp) {
      c.reduce_scatter +=
          collectives_.hsdp_replica_allreduce(Bytes(ceil_div(dense_grads.count(), shard)));
      // The expert shard's replicas: the expert group's ranks outside one node.
      const int expert_replicas = plan.expert_grad_group() / expert_shard;
      if (expert_replicas > 1 && expert_grads > Bytes(0)) {
        c.reduce_scatter += comm::collective_time(
            comm::Collective::kAllReduce, Bytes(ceil_div(expert_grads.count(), expert_shard)),
            expert_replicas, setup_.links.inter);
      }
    }
  }
}

}  // namespace vramsim::training::detail
