// plan_stages and model_flops_per_step of step_graph.hpp: walks each pipeline stage's blocks
// (the embedding, its decoder layers, the head and loss), sets their parameter counts, and has
// each costed and sized by its three sides: compute (block_compute.hpp), collectives
// (block_exchanges.hpp) and memory (block_memory.hpp); then the stage's state (stage_state.hpp).
#include <algorithm>

#include "sim/model/flop_count.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_tensors.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/block_compute.hpp"
#include "sim/training/block_exchanges.hpp"
#include "sim/training/block_memory.hpp"
#include "sim/training/block_shape.hpp"
#include "sim/training/deepspeed_buffers.hpp"
#include "sim/training/deepspeed_zero3_gather.hpp"
#include "sim/training/lora.hpp"
#include "sim/training/stage_state.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

namespace {

// A block's parameters under LoRA: trained, frozen, and the frozen storage.
void set_lora_params(BlockCosts& c, const LoraBlock& lb) {
  c.num_params = lb.trainable + lb.frozen;
  c.trainable_params = lb.trainable;
  c.frozen_weights = lb.frozen_bytes;
}

}  // namespace

using detail::BlockCoster;
using detail::BlockShape;
using detail::BlockWork;
using detail::LayerGemm;

std::vector<StagePlan> plan_stages(const TrainingSetup& setup) {
  const model::ModelSpec& spec = setup.model;
  const TrainingPlan& plan = setup.plan;
  const hardware::DeviceSpec& dev = setup.device;
  const int chunks = plan.schedule == PipelineSchedule::kInterleaved ? plan.pp_interleave : 1;
  const int virtual_stages = plan.pp * chunks;
  const std::int64_t t = plan.tp;
  const std::int64_t e = compute_element_bytes(plan.precision);
  // Context parallelism: each rank runs seq_len / cp tokens of every sequence (two chunks of
  // seq_len / 2cp under the ring's causal balancing, contiguous under Ulysses).
  // With padded samples the sequence is the micro-batch's padded length (sample_lengths.hpp).
  const std::int64_t s = plan.shaped_seq_len() / plan.cp;
  const std::int64_t b = plan.micro_batch;
  const model::ParamCount pc = model::count_params(spec);
  // DeepSpeed ZeRO-3's persistent parameters: whole on every rank, never gathered.
  const PersistentParams persistent = persistent_params(spec, plan);
  const ModuleHooks hooks = module_hooks(spec, plan);  // all zero unless ZeRO-3
  const double attn_per_pair =
      model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill);
  // The busiest EP rank (load imbalance, capacity): its experts' tokens and buffers scale.
  const double routed_load = spec.moe ? plan.moe_routed_load(*spec.moe) : 1.0;
  const BlockShape block_shape{
      .t = t,
      .e = e,
      .s = s,
      .b = b,
      .ring = plan.cp > 1 && plan.cp_comm == CpComm::kRing,
      .ulysses = plan.cp > 1 && plan.cp_comm == CpComm::kAllToAll,
      .routed_load = routed_load,
      .kv_chunk = Bytes(2 * e * s * b * ceil_div(spec.kv_width(), t))};
  const std::vector<std::vector<LayerGemm>> gemms =
      detail::layer_gemms(spec, plan.tp, plan.ep, routed_load);
  const std::vector<std::int64_t> routed = detail::routed_expert_params(spec);
  // LoRA: what each block trains, keeps frozen and runs besides the base (lora.hpp).
  const bool lora = plan.lora.enabled();
  const std::vector<LoraBlock> lora_plan =
      lora ? lora_blocks(spec, plan, e, pc.lm_head == 0 && virtual_stages > 1)
           : std::vector<LoraBlock>{};
  const auto lora_block = [&](std::int64_t layer) -> const LoraBlock* {
    if (!lora) return nullptr;
    return &lora_plan[static_cast<std::size_t>(layer + 1)];
  };
  const cost::CostModel cm = cost_model(setup);
  // Every layer's attention core: b sequences of s tokens on this rank's heads.
  const cost::PrefillAttention attention_shape{
      .attended_pairs = 0,
      .num_sequences = b,
      .num_q_heads = std::max<std::int64_t>(1, spec.num_attention_heads / t),
      .head_dim = spec.head_dim,
      .dtype = detail::compute_dtype(plan.precision),
      .flops_per_pair = attn_per_pair / static_cast<double>(t)};
  // Megatron-LM's GPT trains with dropout (hidden and attention 0.1, its defaults); the eager
  // Hugging Face modules of today's models with none.
  const bool dropout = plan.kernels == Kernels::kMegatron;
  const ActivationShape shape{s,     b, plan.tp, plan.sequence_parallel,
                              plan.attention == Attention::kFlash, e, dropout, routed_load};
  const std::int64_t h_rep =
      plan.sequence_parallel ? ceil_div(spec.hidden_size, t) : spec.hidden_size;
  const LayerActivations dense_acts = layer_activations(spec, shape);
  const LayerActivations moe_acts =
      spec.is_moe() ? layer_activations(spec, shape, true) : dense_acts;
  PlanCollectives collectives(cm, plan, setup.links);
  detail::BlockExchanges exchanges(setup, collectives, block_shape);
  const detail::SelectiveOpWork op_recompute =
      detail::selective_op_work(spec, plan, block_shape);
  // A block's times and bytes, once its parameters (and, for a layer, its activations) are set:
  // its compute, its exchanges, bf16-amp's casts, its recompute, then its data-parallel side.
  auto finish_block = [&](BlockCoster& coster, BlockCosts& c, const BlockWork& fwd,
                          Recompute recompute, const LoraBlock* lb = nullptr) {
    const Bytes weights =
        lb ? c.frozen_weights + Bytes(c.trainable_params * e) : Bytes(c.num_params * e);
    const detail::BlockComputeTimes compute =
        detail::cost_block_compute(coster, c, fwd, weights, lb, plan.lora.rank, block_shape);
    exchanges.add_model_parallel(c, compute);
    if (plan.precision == Precision::kBf16Amp && !fwd.gemms.empty()) {
      // torch.autocast casts each fp32 weight to bf16 at its first use in a forward (read 4 B,
      // write 2 B) and caches the copy (block_memory.hpp, keep_autocast_copies).
      // A head tied to the embedding multiplies by the embedding's weight.
      const std::int64_t weights_cast =
          c.num_params +
          (c.layer < 0 && pc.lm_head == 0 && virtual_stages == 1 ? ceil_div(pc.embedding, t) : 0);
      c.forward += coster.memory_bound(
          Bytes(weights_cast * (param_element_bytes(plan.precision) + e)));
      detail::keep_autocast_copies(c, Bytes(weights_cast * e), recompute);
    }
    c.recompute = detail::recompute_time(recompute, c, compute.attention, block_shape, coster,
                                         op_recompute, fwd);
    exchanges.add_data_parallel(c, weights, lb);
  };

  std::vector<StagePlan> stages(static_cast<std::size_t>(plan.pp));
  for (int vs = 0; vs < virtual_stages; ++vs) {
    StagePlan& stage = stages[static_cast<std::size_t>(vs % plan.pp)];
    BlockCoster coster(cm, detail::compute_dtype(plan.precision), e, dropout, attention_shape);
    std::vector<BlockCosts> blocks;
    if (vs == 0) {  // token embedding (vocab-parallel): a lookup, no FLOPs, nothing stored
      BlockCosts c;
      c.num_params = ceil_div(pc.embedding, t);
      c.trainable_params = c.num_params;
      c.persistent_params = std::min(persistent.embedding, c.num_params);
      c.module_hooks = hooks.embedding;
      const LoraBlock* lb = lora_block(model::kPreLayers);
      if (lb) set_lora_params(c, *lb);
      finish_block(coster, c, {}, Recompute::kNone, lb);
      blocks.push_back(c);
    }
    const model::LayerRange range = model::stage_layers(spec.num_layers, virtual_stages, vs);
    for (std::int64_t layer = range.begin; layer < range.end; ++layer) {
      const auto li = static_cast<std::size_t>(layer);
      BlockCosts c;
      c.layer = layer;
      // Routed experts split over TP (expert tensor parallelism = tp) and EP; without EP they
      // are held, reduced and sharded as the dense weights are (expert_params stays 0).
      if (plan.ep > 1) {
        c.expert_params = ceil_div(routed[li], t * plan.ep);
        c.num_params = ceil_div(pc.per_layer[li] - routed[li], t) + c.expert_params;
      } else {
        c.num_params = ceil_div(pc.per_layer[li], t);
      }
      c.trainable_params = c.num_params;
      c.persistent_params = std::min(persistent.per_layer[li], c.num_params);
      c.module_hooks = hooks.per_layer[li];
      const LoraBlock* lb = lora_block(layer);
      if (lb) set_lora_params(c, *lb);
      if (lb) c.expert_params = 0;  // LoRA runs without EP (validated)
      const bool moe_layer = spec.layers[li].moe;
      // The whole sequence's causal pairs, split evenly over the CP ranks (the ring's two
      // chunks per rank, or Ulysses' heads, balance them).
      BlockWork fwd{
          detail::with_tokens(gemms[li], s * b),
          plan.attention_pairs_per_sequence(spec.layers[li].sliding_window) *
              static_cast<double>(b) / static_cast<double>(plan.cp),
          Bytes(s * b *
                detail::elementwise_bytes_per_token(spec, plan.kernels, e, h_rep, t, moe_layer))};
      if (plan.attention == Attention::kEager) {
        fwd.score_matrices = b * attention_shape.num_q_heads;
        fwd.seq = s;
        fwd.head_dim = spec.head_dim;
      }
      const Recompute recompute = detail::assign_decoder_layer_memory(
          c, moe_layer ? moe_acts : dense_acts, spec, plan, layer, lb, block_shape);
      finish_block(coster, c, fwd, recompute, lb);
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
      c.trainable_params = c.num_params;
      c.persistent_params = std::min(persistent.head, c.num_params);
      c.module_hooks = hooks.head;
      const LoraBlock* lb = lora_block(spec.num_layers);
      if (lb) set_lora_params(c, *lb);
      const LossMemory loss = loss_memory(spec, shape, plan.loss);
      detail::assign_loss_memory(c, loss);
      // The logits matmul (the same FLOPs however the loss is chunked or fused) and the loss's
      // memory-bound kernels.
      BlockWork fwd{{{s * b, ceil_div(spec.vocab_size, t), spec.embed_dim, 1.0}},
                    0.0,
                    loss.forward_traffic};
      fwd.backward_elementwise = loss.backward_traffic;
      finish_block(coster, c, fwd, Recompute::kNone, lb);
      blocks.push_back(c);
    }
    if (plan.deepspeed_zero() && plan.strategy == Strategy::kZero3 && virtual_stages == 1) {
      // A head tied to the embedding multiplies by the embedding's weight: its module's
      // parameters in DeepSpeed's trace.
      mark_kept_gathered(blocks, plan.max_reuse_distance,
                         pc.lm_head > 0 ? 0 : ceil_div(pc.embedding, t));
    }
    stage.cost_basis += coster.counts;
    for (const BlockCosts& c : blocks) {
      stage.num_params += c.num_params;
      stage.trainable_params += c.trainable_params;
      stage.expert_params += c.expert_params;
      stage.frozen_weights += c.frozen_weights;
    }
    stage.chunks.push_back(std::move(blocks));
  }

  const Bytes workspace = dev.architecture == "hopper" || dev.architecture == "blackwell"
                              ? kCublasWorkspaceHopper
                              : kCublasWorkspaceDefault;
  for (StagePlan& stage : stages) {
    plan_stage_state(stage, setup, cm, collectives);
    stage.workspace = workspace;
    stage.activation_message = Bytes(e * s * b * ceil_div(spec.hidden_size, t));  // s: per CP rank
    stage.send = plan.pp > 1 ? collectives.pp_send(stage.activation_message) : Duration::zero();
  }
  // The collectives' bases, for the whole plan, on the first stage (every stage runs them).
  stages.front().cost_basis += collectives.counts;
  return stages;
}

cost::CostModel cost_model(const TrainingSetup& setup) {
  return setup.calibration ? cost::CostModel(setup.device, *setup.calibration)
                           : cost::CostModel(setup.device);
}

Flops model_flops_per_step(const TrainingSetup& setup) {
  const model::ModelSpec& spec = setup.model;
  // 2N per token for the active matmul weights (the lm_head included, lookups excluded) ...
  const model::TokenFlops matmul = model::flops_per_token(spec, 0);
  // ... and 4HQ per attended token per layer, every layer attending the whole sequence (or its
  // window): PaLM's 12 L H Q T once tripled for training. Only data counts: padding is not
  // model work, and a sample attends itself (or, concatenated, the whole sequence).
  const double pair = model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill);
  const double data_tokens = setup.plan.data_tokens_per_sequence();
  double attention = 0.0;
  for (const model::LayerSpec& l : spec.layers) {
    attention +=
        pair * (setup.plan.model_attended_tokens_per_sequence(l.sliding_window) / data_tokens);
  }
  const double forward = (matmul.linear + matmul.lm_head).count() + attention;
  const double tokens = static_cast<double>(setup.plan.effective_global_batch()) * data_tokens;
  if (setup.plan.lora.enabled()) {
    // LoRA: the frozen base runs forward and input gradients (2 x forward, no weight
    // gradients); the adapters 6 FLOPs per parameter per token (dense count; trainable
    // embeddings and lm_head are not added).
    const double adapters =
        static_cast<double>(count_lora_params(spec, setup.plan).adapters);
    return Flops((2.0 * forward + 6.0 * adapters) * tokens);
  }
  return Flops(3.0 * forward * tokens);
}

}  // namespace vramsim::training
