// plan_stages and model_flops_per_step of step_graph.hpp: the costs and bytes of every block.
#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/model/flop_count.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/param_count.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

namespace {

Duration streaming(Bytes moved, const hardware::DeviceSpec& device) {
  return moved > Bytes(0) ? moved / (kMemoryEfficiency * device.memory_bandwidth)
                          : Duration::zero();
}

FlopRate peak_rate(const hardware::DeviceSpec& device, Precision p) {
  return hardware::peak_flop_rate(device, p == Precision::kFp32        ? DType::kFp32
                                          : p == Precision::kFp16Mixed ? DType::kFp16
                                                                       : DType::kBf16);
}

Duration roofline(Flops work, Bytes moved, const hardware::DeviceSpec& device, Precision p) {
  const FlopRate peak = kMatmulEfficiency * peak_rate(device, p);
  const Duration compute = work.count() > 0 ? work / peak : Duration::zero();
  return std::max(compute, streaming(moved, device));
}

// What a block computes for one micro-batch in forward: matmuls (bounded by their FLOPs or by
// reading the weights), the attention core, and the memory-bound kernels between them.
struct BlockWork {
  Flops linear;
  Flops attention;
  Bytes elementwise;  // bytes read + written by norms, rotary, activations, residual adds
};

// Forward time of `w` (`passes` = 2 for the backward: twice the FLOPs and the traffic).
Duration pass_time(const BlockWork& w, Bytes weights, double passes,
                   const hardware::DeviceSpec& device, Precision p) {
  const Duration attention =
      w.attention.count() > 0
          ? (passes * w.attention) / (kAttentionEfficiency * peak_rate(device, p))
          : Duration::zero();
  const auto k = static_cast<std::int64_t>(passes);
  return roofline(passes * w.linear, k * weights, device, p) + attention +
         streaming(k * w.elementwise, device);
}

// Forward bytes a decoder layer's memory-bound kernels read and write per token, as PyTorch eager
// runs them (Hugging Face Transformers' Llama modules; FSDP recipes such as fms-fsdp):
//   RMSNorm x2       upcast to fp32, square, mean, scale, downcast, weight: 4e + 28 B per element
//   residual add x2  read two, write one: 3e per element
//   rotary (q, k)    x*cos, rotate_half (neg, cat), *sin, add: ~10e per element
//   SDPA layouts     q, k, v to (b, heads, s, d) and the output back: read + write each
//   gated MLP        act(gate): 2e, act * up: 3e per inner element (plain MLP: 2e)
//   MoE dispatch     each of the k token copies permuted out and back: 4e per element of k h
// Widths split by t where the tensor is TP-sharded; h_rep is h (h / t under SP).
// NOTE: fused kernels (Transformer Engine, Liger, torch.compile) move 3-5x less; the backward
// is taken as twice the forward.
std::int64_t elementwise_bytes_per_token(const model::ModelSpec& spec, std::int64_t e,
                                         std::int64_t h_rep, std::int64_t t, bool moe_layer) {
  std::int64_t inner = spec.intermediate_size;
  std::int64_t dispatch = 0;
  if (moe_layer) {
    const model::MoeSpec& m = *spec.moe;
    inner = m.num_experts_per_tok * m.expert_intermediate_size + m.shared_intermediate_size;
    dispatch = 4 * e * m.num_experts_per_tok * spec.hidden_size;
  }
  const std::int64_t q = spec.q_width(), kv = spec.kv_width();
  const std::int64_t norms = 2 * (4 * e + 28) * h_rep;
  const std::int64_t residual = 2 * 3 * e * h_rep;
  const std::int64_t rotary = 10 * e * (q + kv) / t;
  const std::int64_t layouts = 2 * e * (2 * q + 2 * kv) / t;
  const std::int64_t act = (spec.mlp == model::MlpKind::kGated ? 5 : 2) * e * inner / t;
  return norms + residual + rotary + layouts + act + dispatch;
}

// Query-key pairs a causal sequence of s tokens attends, through a window w (0 = global).
double attended_pairs(std::int64_t s, std::int64_t window) {
  const double sd = static_cast<double>(s);
  if (window <= 0 || window >= s) return sd * (sd + 1.0) / 2.0;
  const double w = static_cast<double>(window);
  return w * (w + 1.0) / 2.0 + (sd - w) * w;
}

bool gathers_params(Strategy s) { return sharded_parts(s).params; }

}  // namespace

std::vector<StagePlan> plan_stages(const TrainingSetup& setup) {
  const model::ModelSpec& spec = setup.model;
  const TrainingPlan& plan = setup.plan;
  const hardware::DeviceSpec& dev = setup.device;
  const int chunks = plan.schedule == PipelineSchedule::kInterleaved ? plan.pp_interleave : 1;
  const int virtual_stages = plan.pp * chunks;
  const std::int64_t t = plan.tp;
  const std::int64_t e = compute_element_bytes(plan.precision);
  const std::int64_t s = plan.seq_len;
  const std::int64_t b = plan.micro_batch;
  const model::ParamCount pc = model::count_params(spec);
  const std::vector<model::LayerFlops> per_token = model::layer_flops(spec, 0);
  const double attn_per_pair =
      model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill);
  const ActivationShape shape{s, b, plan.tp, plan.sequence_parallel, plan.flash_attention, e};
  const std::int64_t h_rep =
      plan.sequence_parallel ? ceil_div(spec.hidden_size, t) : spec.hidden_size;
  const LayerActivations dense_acts = layer_activations(spec, shape);
  const LayerActivations moe_acts =
      spec.is_moe() ? layer_activations(spec, shape, true) : dense_acts;
  const BytesPerParam per = bytes_per_param(plan.precision, plan.optimizer);
  const int shard = plan.shard_degree();
  const bool grads_sharded = sharded_parts(plan.strategy).grads;
  // Megatron TP: 2 all-reduces per layer in forward and 2 in backward of s b h activations, or
  // with sequence parallelism 2 all-gathers + 2 reduce-scatters each way (same bytes on wire).
  const Bytes tp_message(e * s * b * spec.hidden_size);
  const Duration tp_pass =
      plan.sequence_parallel
          ? 2 * (tp_collective_time(comm::Collective::kAllGather, tp_message, plan, setup.links) +
                 tp_collective_time(comm::Collective::kReduceScatter, tp_message, plan,
                                    setup.links))
          : 2 * tp_collective_time(comm::Collective::kAllReduce, tp_message, plan, setup.links);

  auto finish_block = [&](BlockCosts& c, const BlockWork& fwd, const BlockWork& recompute) {
    const Bytes weights(c.num_params * e);
    c.forward = pass_time(fwd, weights, 1.0, dev, plan.precision);
    c.backward = pass_time(fwd, weights, 2.0, dev, plan.precision);
    const bool recomputes = recompute.linear.count() > 0 || recompute.attention.count() > 0;
    c.recompute = recomputes
                      ? pass_time(recompute, recompute.linear.count() > 0 ? weights : Bytes(0), 1.0,
                                  dev, plan.precision)
                      : Duration::zero();
    c.gathered = gathers_params(plan.strategy) ? weights : Bytes(0);
    c.full_grads = grads_sharded ? Bytes(c.num_params * per.grads) : Bytes(0);
    if (gathers_params(plan.strategy)) {
      c.all_gather =
          dp_collective_time(comm::Collective::kAllGather, weights, shard, plan, setup.links);
    }
    if (grads_sharded) {
      c.reduce_scatter = dp_collective_time(comm::Collective::kReduceScatter, c.full_grads, shard,
                                            plan, setup.links);
      if (plan.strategy == Strategy::kHsdp) {
        c.reduce_scatter += hsdp_replica_allreduce_time(
            Bytes(ceil_div(c.full_grads.count(), shard)), plan, setup.links);
      }
    }
  };

  std::vector<StagePlan> stages(static_cast<std::size_t>(plan.pp));
  for (int vs = 0; vs < virtual_stages; ++vs) {
    StagePlan& stage = stages[static_cast<std::size_t>(vs % plan.pp)];
    std::vector<BlockCosts> blocks;
    if (vs == 0) {  // token embedding (vocab-parallel): a lookup, no FLOPs, nothing stored
      BlockCosts c;
      c.num_params = ceil_div(pc.embedding, t);
      finish_block(c, {}, {});
      blocks.push_back(c);
    }
    const model::LayerRange range = model::stage_layers(spec.num_layers, virtual_stages, vs);
    for (std::int64_t layer = range.begin; layer < range.end; ++layer) {
      const auto li = static_cast<std::size_t>(layer);
      BlockCosts c;
      c.layer = layer;
      c.num_params = ceil_div(pc.per_layer[li], t);
      const double tokens = static_cast<double>(s * b);
      const Flops attention(attn_per_pair * attended_pairs(s, spec.layers[li].sliding_window) *
                            static_cast<double>(b) / static_cast<double>(t));
      const bool moe_layer = spec.layers[li].moe;
      const BlockWork fwd{Flops(per_token[li].linear.count() * tokens / static_cast<double>(t)),
                          attention,
                          Bytes(s * b * elementwise_bytes_per_token(spec, e, h_rep, t, moe_layer))};
      const LayerActivations& acts = moe_layer ? moe_acts : dense_acts;
      c.stored = stored_activation_bytes(acts, plan.checkpointing, layer);
      BlockWork recompute;
      if (plan.checkpointing.layer_recomputed(layer)) {
        c.rematerialized = acts.stored_none - acts.stored_full;
        c.forward_transient = acts.recompute_peak;
        recompute = fwd;
      } else if (plan.checkpointing.kind == CheckpointKind::kSelective) {
        c.rematerialized = acts.stored_none - acts.stored_selective;
        recompute.attention = attention;
      }
      c.backward_transient = acts.backward_transient;
      c.tp_forward = tp_pass;
      c.tp_backward = tp_pass;
      finish_block(c, fwd, recompute);
      blocks.push_back(c);
    }
    if (vs == virtual_stages - 1) {  // final norm, lm head and the cross-entropy loss
      BlockCosts c;
      const std::int64_t head =
          pc.lm_head > 0 ? pc.lm_head : (virtual_stages > 1 ? pc.embedding : 0);
      // The final norm's weight (and bias) is replicated on every TP rank.
      const std::int64_t final_norm =
          spec.final_norm ? spec.hidden_size * (spec.norm == model::NormKind::kLayerNorm ? 2 : 1)
                          : 0;
      c.num_params = ceil_div(head, t) + final_norm;
      c.stored = logits_bytes(spec, shape);
      c.forward_transient = Bytes(e * s * b * ceil_div(spec.vocab_size, t));
      c.backward_transient = c.stored;
      // The logits matmul; the loss writes and reads the fp32 logits once each.
      const BlockWork fwd{
          Flops(2.0 * static_cast<double>(spec.embed_dim) * static_cast<double>(spec.vocab_size) *
                static_cast<double>(s * b) / static_cast<double>(t)),
          Flops(0), 2 * c.stored};
      finish_block(c, fwd, {});
      blocks.push_back(c);
    }
    for (const BlockCosts& c : blocks) stage.num_params += c.num_params;
    stage.chunks.push_back(std::move(blocks));
  }

  const Bytes workspace = dev.architecture == "hopper" || dev.architecture == "blackwell"
                              ? kCublasWorkspaceHopper
                              : kCublasWorkspaceDefault;
  for (StagePlan& stage : stages) {
    stage.state = model_state_bytes(stage.num_params, plan.strategy, plan.precision, plan.optimizer,
                                    shard, plan.offload_optimizer);
    stage.workspace = workspace;
    if (plan.strategy == Strategy::kDdp && plan.dp() > 1) {
      for (Bytes left = stage.state.grads; left > Bytes(0); left = left - plan.ddp_bucket) {
        stage.ddp_buckets.push_back(min(left, plan.ddp_bucket));
      }
    }
    stage.activation_message = Bytes(e * s * b * ceil_div(spec.hidden_size, t));
    stage.send =
        plan.pp > 1 ? pp_send_time(stage.activation_message, plan, setup.links) : Duration::zero();
    const std::int64_t local = sharded_parts(plan.strategy).optimizer
                                   ? ceil_div(stage.num_params, shard)
                                   : stage.num_params;
    if (plan.offload_optimizer) {
      const comm::LinkModel pcie = comm::host_link(dev);
      stage.offload = Bytes(local * (per.grads + per.params)) / pcie.bandwidth +
                      Duration::from_seconds(static_cast<double>(local) / kCpuAdamParamsPerSecond);
    } else {
      const Bytes moved(local * (per.grads + per.params + 2 * (per.master + per.optimizer)));
      stage.optimizer = moved / (kMemoryEfficiency * dev.memory_bandwidth);
    }
    if (plan.strategy == Strategy::kZero1 || plan.strategy == Strategy::kZero2) {
      stage.param_gather =
          dp_collective_time(comm::Collective::kAllGather, Bytes(stage.num_params * per.params),
                             plan.dp(), plan, setup.links);
    }
  }
  return stages;
}

Flops model_flops_per_step(const TrainingSetup& setup) {
  const model::ModelSpec& spec = setup.model;
  // 2N per token for the active matmul weights (the lm_head included, lookups excluded) ...
  const model::TokenFlops matmul = model::flops_per_token(spec, 0);
  // ... and 4HQ per attended token per layer, every layer attending the whole sequence (or its
  // window): PaLM's 12 L H Q T once tripled for training.
  const double pair = model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill);
  double attention = 0.0;
  for (const model::LayerSpec& l : spec.layers) {
    const std::int64_t w =
        l.sliding_window > 0 ? std::min(l.sliding_window, setup.plan.seq_len) : setup.plan.seq_len;
    attention += pair * static_cast<double>(w);
  }
  const double forward = (matmul.linear + matmul.lm_head).count() + attention;
  const double tokens = static_cast<double>(setup.plan.effective_global_batch()) *
                        static_cast<double>(setup.plan.seq_len);
  return Flops(3.0 * forward * tokens);
}

}  // namespace vramsim::training
