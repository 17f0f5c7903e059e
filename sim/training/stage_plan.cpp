// plan_stages and model_flops_per_step of step_graph.hpp: the costs and bytes of every block.
#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/core/check.hpp"
#include "sim/model/flop_count.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/deepspeed_buffers.hpp"
#include "sim/training/deepspeed_zero3_gather.hpp"
#include "sim/training/layer_memory.hpp"
#include "sim/training/lora.hpp"
#include "sim/training/stage_state.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

namespace {

DType compute_dtype(Precision p) {
  return p == Precision::kFp32        ? DType::kFp32
         : p == Precision::kFp16Mixed ? DType::kFp16
                                      : DType::kBf16;
}

// `count` identical matrices of one shape on this TP rank: C[m x n] = A[m x k] W[k x n].
struct Gemm {
  std::int64_t m = 0, n = 0, k = 0;
  double count = 1;
};

// What a block computes for one micro-batch in forward: its matmuls, the attention core (over
// `attention_pairs` query-key pairs of the micro-batch), and the memory-bound kernels between.
struct BlockWork {
  std::vector<Gemm> gemms;
  double attention_pairs = 0;
  Bytes elementwise;  // bytes read + written by norms, rotary, activations, residual adds
  // Those bytes in backward where they are not twice the forward's (the loss).
  std::optional<Bytes> backward_elementwise = std::nullopt;
  // Attention::kEager: `score_matrices` (b x heads on this rank) of seq x seq scores, each
  // Q K^T and P V a GEMM with head_dim; 0 for flash attention (attention_pairs above).
  std::int64_t score_matrices = 0;
  std::int64_t seq = 0, head_dim = 0;
};

// Times blocks through the cost model and counts where each estimate came from.
class BlockCoster {
 public:
  BlockCoster(const cost::CostModel& cm, DType dtype, std::int64_t element_bytes, bool dropout,
              cost::PrefillAttention attention)
      : cm_(cm), dtype_(dtype), e_(element_bytes), dropout_(dropout), attention_(attention) {}

  // The matmuls in forward, or (no matmuls) reading `weights` once.
  Duration linear_forward(const BlockWork& w, Bytes weights) {
    if (w.gemms.empty()) return take(cm_.memory_bound(weights));
    double seconds = 0;
    for (const Gemm& g : w.gemms) {
      seconds += g.count * take(cm_.matmul(dtype_, g.m, g.n, g.k)).seconds();
    }
    return Duration::from_seconds(seconds);
  }
  // The input-gradient GEMM of every weight, or (no matmuls) reading and writing `weights`.
  Duration input_gradients(const BlockWork& w, Bytes weights) {
    if (w.gemms.empty()) return take(cm_.memory_bound(2 * weights));
    double seconds = 0;
    for (const Gemm& g : w.gemms) {
      seconds += g.count * take(cm_.matmul(dtype_, g.m, g.k, g.n)).seconds();
    }
    return Duration::from_seconds(seconds);
  }
  // The weight-gradient GEMM of every weight (what Megatron overlaps the backward TP
  // collectives with); zero without matmuls.
  Duration weight_gradients(const BlockWork& w) {
    double seconds = 0;
    for (const Gemm& g : w.gemms) {
      seconds += g.count * take(cm_.matmul(dtype_, g.k, g.n, g.m)).seconds();
    }
    return Duration::from_seconds(seconds);
  }
  // Eager: Q K^T [s x d][d x s] and P V [s x s][s x d] per score matrix, and the softmax and its
  // dropout over the scores: read e, write e, then read e, write e and a 1-byte mask, so
  // (4e + 1) bytes per score (Korthikanti et al. 2022, sec. 4.1, the 5 a s^2 b activations);
  // without dropout the softmax's 2e.
  Duration attention_forward(const BlockWork& w) {
    if (w.score_matrices > 0) {
      const double n = static_cast<double>(w.score_matrices);
      const double gemms = take(cm_.matmul(dtype_, w.seq, w.seq, w.head_dim)).seconds() +
                           take(cm_.matmul(dtype_, w.seq, w.head_dim, w.seq)).seconds();
      return Duration::from_seconds(n * gemms) +
             memory_bound(score_bytes(w, dropout_ ? 4 * e_ + 1 : 2 * e_));
    }
    if (w.attention_pairs <= 0) return Duration::zero();
    cost::PrefillAttention a = attention_;
    a.attended_pairs = w.attention_pairs;
    return take(cm_.prefill_attention(a));
  }
  // Eager: the four gradient GEMMs, the softmax backward (read the probabilities and their
  // gradient, write the scores' gradient: 3e) and the dropout backward (read the gradient and
  // the mask, write: 2e + 1; none without dropout). Flash: twice its forward (no measured
  // table).
  Duration attention_backward(const BlockWork& w) {
    if (w.score_matrices > 0) {
      const double n = static_cast<double>(w.score_matrices);
      const double gemms = take(cm_.matmul(dtype_, w.seq, w.head_dim, w.seq)).seconds() +
                           take(cm_.matmul(dtype_, w.seq, w.seq, w.head_dim)).seconds() +
                           take(cm_.matmul(dtype_, w.seq, w.seq, w.head_dim)).seconds() +
                           take(cm_.matmul(dtype_, w.head_dim, w.seq, w.seq)).seconds();
      return Duration::from_seconds(n * gemms) +
             memory_bound(score_bytes(w, dropout_ ? 5 * e_ + 1 : 3 * e_));
    }
    return 2 * attention_forward(w);
  }
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

// The matmul weights of each decoder layer on one TP rank, m left to the caller: dense weights
// with m = the micro-batch's tokens, routed experts (`routed`) with their share of them.
struct LayerGemm {
  std::int64_t n = 0, k = 0;
  double count = 1;
  double routed_share = 0;  // > 0: a routed expert, m = tokens * routed_share
};

// Expert parallelism (`ep` > 1): each rank holds copies / ep of a layer's routed experts, and
// each of those receives the routed tokens of all ep ranks (balanced routing: every expert gets
// tokens * top_k / E of each rank), so its share of one rank's tokens is ep * top_k / E.
// `routed_load` scales the busiest rank's routed tokens (TrainingPlan::moe_routed_load).
std::vector<std::vector<LayerGemm>> layer_gemms(const model::ModelSpec& spec, int tp, int ep,
                                                double routed_load) {
  std::vector<std::vector<LayerGemm>> out(static_cast<std::size_t>(spec.num_layers));
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (!t.matmul || t.layer < 0 || t.layer >= spec.num_layers) continue;
    if (t.kind != model::TensorKind::kLinear && t.kind != model::TensorKind::kExpertLinear &&
        t.kind != model::TensorKind::kRouter) {
      continue;
    }
    const model::ShardShape sh = model::shard_shape(spec, t, tp);
    const bool routed = t.copies > t.active_copies;
    const double experts = routed ? static_cast<double>(t.copies) / ep : 0.0;
    LayerGemm g{sh.out_features, sh.in_features,
                routed ? experts : static_cast<double>(t.active_copies),
                routed ? static_cast<double>(t.active_copies) * ep /
                             static_cast<double>(t.copies) * routed_load
                       : 0.0};
    auto& list = out[static_cast<std::size_t>(t.layer)];
    const auto same = std::find_if(list.begin(), list.end(), [&](const LayerGemm& o) {
      return o.n == g.n && o.k == g.k && o.routed_share == g.routed_share;
    });
    if (same == list.end()) {
      list.push_back(g);
    } else {
      same->count += g.count;
    }
  }
  return out;
}

// The routed experts' parameters of each decoder layer (all experts, unsharded).
std::vector<std::int64_t> routed_expert_params(const model::ModelSpec& spec) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(spec.num_layers), 0);
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (t.layer < 0 || t.layer >= spec.num_layers) continue;
    if (t.kind == model::TensorKind::kExpertLinear && t.copies > t.active_copies) {
      out[static_cast<std::size_t>(t.layer)] += t.numel();
    }
  }
  return out;
}

std::vector<Gemm> with_tokens(const std::vector<LayerGemm>& layer, std::int64_t tokens) {
  std::vector<Gemm> out;
  out.reserve(layer.size());
  for (const LayerGemm& g : layer) {
    const std::int64_t m =
        g.routed_share > 0
            ? std::max<std::int64_t>(
                  1, std::llround(static_cast<double>(tokens) * g.routed_share))
            : tokens;
    out.push_back({m, g.n, g.k, g.count});
  }
  return out;
}

// Forward bytes a decoder layer's memory-bound kernels read and write per token. Widths split by
// t where the tensor is TP-sharded; h_rep is h (h / t under SP). Rotary only where the model
// has it (no learned position table). The backward is taken as twice the forward.
//
// Kernels::kEager, as PyTorch eager runs them (Hugging Face Transformers' Llama modules; FSDP
// recipes such as fms-fsdp):
//   RMSNorm x2       upcast to fp32, square, mean, scale, downcast, weight: 4e + 28 B per element
//   residual add x2  read two, write one: 3e per element
//   rotary (q, k)    x*cos, rotate_half (neg, cat), *sin, add: ~10e per element
//   SDPA layouts     q, k, v to (b, heads, s, d) and the output back: read + write each
//   gated MLP        act(gate): 2e, act * up: 3e per inner element (plain MLP: 2e)
//   MoE dispatch     each of the k token copies permuted out and back: 4e per element of k h
// Kernels::kMegatron, Megatron-LM's fused kernels (megatron/fused_kernels, fused_bias_gelu.py,
// fused_bias_dropout_add in transformer.py), each reading its input once and writing once:
//   LayerNorm x2          fused: read h, write h: 2e per element
//   bias-dropout-add x2   read the input and the residual, write the sum and the 1-byte
//                         dropout mask: 3e + 1 per element (Korthikanti et al. 2022,
//                         arXiv:2205.05198, sec. 4.1: the dropout masks are sbh bytes)
//   bias-GeLU             read and write the 4h/t inner activation: 2e (gated: 3e)
//   rotary (q, k)         one fused kernel: read + write, 2e per element
//   layouts               none: Megatron's attention works on strided views of [s, b, np, hn]
//   MoE dispatch          as eager
std::int64_t elementwise_bytes_per_token(const model::ModelSpec& spec, Kernels kernels,
                                         std::int64_t e, std::int64_t h_rep, std::int64_t t,
                                         bool moe_layer) {
  std::int64_t inner = spec.intermediate_size;
  std::int64_t dispatch = 0;
  if (moe_layer) {
    const model::MoeSpec& m = *spec.moe;
    inner = m.num_experts_per_tok * m.expert_intermediate_size + m.shared_intermediate_size;
    dispatch = 4 * e * m.num_experts_per_tok * spec.hidden_size;
  }
  const std::int64_t q = spec.q_width(), kv = spec.kv_width();
  const bool rotary = spec.learned_positions == 0;
  const bool gated = spec.mlp == model::MlpKind::kGated;
  switch (kernels) {
    case Kernels::kEager: {
      const std::int64_t norms = 2 * (4 * e + 28) * h_rep;
      const std::int64_t residual = 2 * 3 * e * h_rep;
      const std::int64_t rope = rotary ? 10 * e * (q + kv) / t : 0;
      const std::int64_t layouts = 2 * e * (2 * q + 2 * kv) / t;
      const std::int64_t act = (gated ? 5 : 2) * e * inner / t;
      return norms + residual + rope + layouts + act + dispatch;
    }
    case Kernels::kMegatron: {
      const std::int64_t norms = 2 * 2 * e * h_rep;
      const std::int64_t bias_dropout_add = 2 * (3 * e + 1) * h_rep;
      const std::int64_t rope = rotary ? 2 * e * (q + kv) / t : 0;
      const std::int64_t act = (gated ? 3 : 2) * e * inner / t;
      return norms + bias_dropout_add + rope + act + dispatch;
    }
  }
  VRAMSIM_UNREACHABLE("invalid Kernels");
}

bool gathers_params(Strategy s) { return sharded_parts(s).params; }

// A LoRA block's adapter matmuls (x A, then (x A) B) as the layer's GEMM list, m left to
// with_tokens.
std::vector<LayerGemm> adapter_gemms(const LoraBlock& b, std::int64_t rank) {
  std::vector<LayerGemm> out;
  for (const AdapterShape& a : b.adapters) {
    out.push_back({rank, a.in, a.copies, a.routed_share});
    out.push_back({a.out, rank, a.copies, a.routed_share});
  }
  return out;
}

// A block's parameters under LoRA: trained, frozen, and the frozen storage.
void set_lora_params(BlockCosts& c, const LoraBlock& lb) {
  c.num_params = lb.trainable + lb.frozen;
  c.trainable_params = lb.trainable;
  c.frozen_weights = lb.frozen_bytes;
}

}  // namespace

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
  const bool ring = plan.cp > 1 && plan.cp_comm == CpComm::kRing;
  const bool ulysses = plan.cp > 1 && plan.cp_comm == CpComm::kAllToAll;
  const model::ParamCount pc = model::count_params(spec);
  // DeepSpeed ZeRO-3's persistent parameters: whole on every rank, never gathered.
  const PersistentParams persistent = persistent_params(spec, plan);
  const ModuleHooks hooks = module_hooks(spec, plan);  // all zero unless ZeRO-3
  const double attn_per_pair =
      model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill);
  // The busiest EP rank (load imbalance, capacity): its experts' tokens and buffers scale.
  const double routed_load = spec.moe ? plan.moe_routed_load(*spec.moe) : 1.0;
  const std::vector<std::vector<LayerGemm>> gemms =
      layer_gemms(spec, plan.tp, plan.ep, routed_load);
  const std::vector<std::int64_t> routed = routed_expert_params(spec);
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
      .dtype = compute_dtype(plan.precision),
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
  BytesPerParam per = bytes_per_param(plan.precision, plan.optimizer);
  per.grads = plan.grad_element_bytes();  // Megatron-LM: fp32 main gradients under bf16
  const int shard = plan.shard_degree();
  const int expert_shard = plan.expert_shard_degree();
  const bool grads_sharded = sharded_parts(plan.strategy).grads;
  // Megatron TP: 2 all-reduces per layer in forward and 2 in backward of s b h activations, or
  // with sequence parallelism 2 all-gathers + 2 reduce-scatters each way (same bytes on wire).
  const Bytes tp_message(e * s * b * spec.hidden_size);
  PlanCollectives collectives(cm, plan, setup.links);
  const Duration tp_all_gathers =
      plan.sequence_parallel ? 2 * collectives.tp(comm::Collective::kAllGather, tp_message)
                             : Duration::zero();
  const Duration tp_reductions =
      plan.sequence_parallel ? 2 * collectives.tp(comm::Collective::kReduceScatter, tp_message)
                             : 2 * collectives.tp(comm::Collective::kAllReduce, tp_message);
  const Duration tp_pass = tp_all_gathers + tp_reductions;
  // The backward's TP collectives as Megatron-LM runs them (tensor_parallel/layers.py,
  // LinearWithGradAccumulationAndAsyncCommunication): the input gradient's all-reduce (SP: its
  // reduce-scatter) is issued asynchronously and overlaps the weight-gradient GEMM, so only what
  // outlasts that GEMM is exposed; under SP the all-gathers of the saved input that the weight
  // gradient needs stay on the critical path.
  auto tp_backward_exposed = [&](Duration weight_gradients) {
    return tp_all_gathers + std::max(Duration::zero(), tp_reductions - weight_gradients);
  };
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
  const Bytes kv_chunk(2 * e * s * b * ceil_div(spec.kv_width(), t));
  const Duration ring_forward_send = ring ? collectives.cp_send(kv_chunk) : Duration::zero();
  const Duration ring_backward_send =
      ring ? collectives.cp_send(2 * kv_chunk) : Duration::zero();
  const Duration ulysses_pass =
      ulysses ? 2 * collectives.cp_all_to_all(Bytes(e * s * b * ceil_div(spec.q_width(), t))) +
                    2 * collectives.cp_all_to_all(Bytes(e * s * b * ceil_div(spec.kv_width(), t)))
              : Duration::zero();
  auto ring_exposed = [&](Duration send, Duration attention) {
    const Duration per_step = Duration::from_seconds(attention.seconds() / plan.cp);
    return (plan.cp - 1) * std::max(Duration::zero(), send - per_step);
  };
  // Parameter offload (ZeRO-Offload / ZeRO-Infinity offload_param, FSDP CPUOffload): before a
  // block's all-gather its parameter shard (2 or 4 bytes per parameter, / shard) is copied from
  // pinned host memory over the host link, and from NVMe into the host first; after its
  // reduce-scatter the gradient shard goes back down. Both on the communication stream, so the
  // prefetch one block ahead hides them where compute outlasts them.
  const comm::LinkModel host = comm::host_link(dev);
  const bool params_offloaded = plan.offload_params != OffloadParams::kNone;
  const Bandwidth nvme = GBps(plan.nvme_gb_per_s);
  auto fetch_shard = [&](Bytes shard_bytes) {
    if (!params_offloaded || shard_bytes <= Bytes(0)) return Duration::zero();
    Duration d = host.latency + shard_bytes / host.bandwidth;
    if (plan.offload_params == OffloadParams::kNvme) d += shard_bytes / nvme;
    return d;
  };
  // Expert parallelism: each MoE layer dispatches its tokens' top-k copies to the experts' ranks
  // and combines their outputs back (Megatron-LM's MoEAlltoAllTokenDispatcher): two all-to-alls
  // over the EP group of e s b k h bytes per rank (under SP the rank's s / t tokens), and the
  // same two in backward, not overlapped (Megatron's overlap of them is an option, off by
  // default). NOTE: balanced routing is assumed (every expert receives tokens * top_k / E).
  const Duration ep_pass =
      plan.ep > 1 && spec.moe
          ? 2 * collectives.ep_all_to_all(Bytes(std::llround(
                    routed_load *
                    static_cast<double>(e * (plan.sequence_parallel ? ceil_div(s * b, t) : s * b) *
                                        spec.moe->num_experts_per_tok * spec.hidden_size))))
          : Duration::zero();

  // The matmuls `selective-op` recomputes (activation_memory.hpp, part 3): the odd positions
  // of the block's call order, each once, on the whole micro-batch (tp = 1).
  BlockWork op_recompute{{}, 0.0, Bytes(0)};
  Bytes op_recompute_weights(0);
  if (plan.checkpointing.kind == CheckpointKind::kSelectiveOp) {
    const std::vector<SelectiveOpMatmul> matmuls = selective_op_matmuls(spec);
    for (std::size_t i = 1; i < matmuls.size(); i += 2) {
      op_recompute.gemms.push_back({s * b, matmuls[i].out_features, matmuls[i].in_features, 1.0});
      op_recompute_weights += Bytes(matmuls[i].out_features * matmuls[i].in_features * e);
    }
  }
  // LoRA (`lb` set): the frozen base's matmuls run forward and input-gradient GEMMs only (no
  // weight gradients; a frozen lookup has no backward at all), the adapters their three small
  // GEMMs each, and a quantized base is dequantized to the compute dtype before each use, in
  // forward and again in backward (bitsandbytes' matmul_4bit / MatMul8bitLt): read the stored
  // bytes, write the dequantized weight, a memory-bound pass.
  auto finish_block = [&](BlockCoster& coster, BlockCosts& c, const BlockWork& fwd,
                          Recompute recompute, const LoraBlock* lb = nullptr) {
    const Bytes weights =
        lb ? c.frozen_weights + Bytes(c.trainable_params * e) : Bytes(c.num_params * e);
    const Duration attention = coster.attention_forward(fwd);
    c.forward = coster.linear_forward(fwd, weights) + attention +
                coster.memory_bound(fwd.elementwise);
    Duration weight_gradients = coster.weight_gradients(fwd);
    Duration input_gradients = coster.input_gradients(fwd, weights);
    if (lb) {
      if (!lb->base_matmul_trainable) weight_gradients = Duration::zero();
      if (fwd.gemms.empty() && lb->trainable == 0) input_gradients = Duration::zero();
      if (lb->quantized > 0) {
        const Duration dequantize =
            coster.memory_bound(lb->quantized_bytes + Bytes(lb->quantized * e));
        c.forward += dequantize;
        input_gradients += dequantize;
      }
      if (!lb->adapters.empty()) {
        const BlockWork adapters{with_tokens(adapter_gemms(*lb, plan.lora.rank), s * b), 0.0,
                                 Bytes(0)};
        c.forward += coster.linear_forward(adapters, Bytes(0));
        input_gradients += coster.input_gradients(adapters, Bytes(0));
        weight_gradients += coster.weight_gradients(adapters);
      }
    }
    const Duration attention_backward = coster.attention_backward(fwd);
    c.backward = input_gradients + weight_gradients + attention_backward +
                 coster.memory_bound(fwd.backward_elementwise.value_or(2 * fwd.elementwise));
    if (c.layer >= 0 && plan.tp > 1) {
      c.tp_forward = tp_pass;
      c.tp_backward = tp_backward_exposed(weight_gradients);
    }
    if (c.layer >= 0 && ring) {
      c.cp_forward = ring_exposed(ring_forward_send, attention);
      c.cp_backward = ring_exposed(ring_backward_send, attention_backward);
    } else if (c.layer >= 0 && ulysses) {
      c.cp_forward = ulysses_pass;
      c.cp_backward = ulysses_pass;
    }
    if (c.layer >= 0 && spec.layers[static_cast<std::size_t>(c.layer)].moe) {
      c.ep_forward = ep_pass;
      c.ep_backward = ep_pass;
    }
    if (plan.precision == Precision::kBf16Amp && !fwd.gemms.empty()) {
      // torch.autocast casts each fp32 weight to bf16 at its first use in a forward (read 4 B,
      // write 2 B) and caches the copy until the forward's autocast region exits
      // (torch/csrc/autograd/autocast_mode.cpp caches casts of leaf tensors that require
      // grad); the matmul's autograd node saves it for backward. A recomputed block casts again
      // and keeps the new copy for its backward.
      // A head tied to the embedding multiplies by the embedding's weight.
      const std::int64_t weights_cast =
          c.num_params +
          (c.layer < 0 && pc.lm_head == 0 && virtual_stages == 1 ? ceil_div(pc.embedding, t) : 0);
      const Bytes cast(weights_cast * e);
      c.forward += coster.memory_bound(
          Bytes(weights_cast * (param_element_bytes(plan.precision) + e)));
      if (recompute == Recompute::kFull) {
        c.autocast_cache += cast;
        c.rematerialized += cast;
      } else {
        c.stored += cast;
      }
    }
    switch (recompute) {
      case Recompute::kNone: c.recompute = Duration::zero(); break;
      // The whole forward again, its TP, CP and EP exchanges included (they block as in
      // forward).
      case Recompute::kFull:
        c.recompute = c.forward + c.tp_forward + c.cp_forward + c.ep_forward;
        break;
      // The attention core again; under ring CP it needs the other ranks' K and V again (the
      // Ulysses all-to-alls sit outside the core: their outputs are what the core keeps).
      case Recompute::kAttention:
        c.recompute = attention + (ring ? c.cp_forward : Duration::zero());
        break;
      // SDPA's outputs are kept: the recomputed matmuls and the memory-bound ops between them.
      case Recompute::kOps:
        c.recompute = coster.linear_forward(op_recompute, op_recompute_weights) +
                      coster.memory_bound(fwd.elementwise);
        break;
    }
    // Routed experts (EP) are gathered and reduced over their own group.
    const Bytes expert_weights(c.expert_params * e);
    const Bytes kept_whole(c.persistent_params * e);  // ZeRO-3's persistent parameters
    const Bytes dense_weights = weights - expert_weights - kept_whole;
    c.gathered = gathers_params(plan.strategy) ? weights - kept_whole : Bytes(0);
    c.full_grads = grads_sharded ? Bytes(c.trainable_params * per.grads) : Bytes(0);
    const Bytes expert_grads = grads_sharded ? Bytes(c.expert_params * per.grads) : Bytes(0);
    if (gathers_params(plan.strategy)) {
      c.all_gather = collectives.dp(comm::Collective::kAllGather, dense_weights, shard) +
                     collectives.expert_dp(comm::Collective::kAllGather, expert_weights,
                                           expert_shard) +
                     fetch_shard(Bytes(ceil_div(dense_weights.count(), shard) +
                                       ceil_div(expert_weights.count(), expert_shard)));
    }
    if (grads_sharded && (!lb || c.full_grads > Bytes(0))) {
      const Bytes dense_grads = c.full_grads - expert_grads;
      c.reduce_scatter =
          collectives.dp(comm::Collective::kReduceScatter, dense_grads, shard) +
          collectives.expert_dp(comm::Collective::kReduceScatter, expert_grads, expert_shard);
      if (params_offloaded) {  // the gradient shard down to the host
        const Bytes down(ceil_div(dense_grads.count(), shard) +
                         ceil_div(expert_grads.count(), expert_shard));
        c.reduce_scatter += host.latency + down / host.bandwidth;
      }
      if (plan.strategy == Strategy::kHsdp) {
        c.reduce_scatter +=
            collectives.hsdp_replica_allreduce(Bytes(ceil_div(dense_grads.count(), shard)));
        // The expert shard's replicas: the expert group's ranks outside one node.
        const int expert_replicas = plan.expert_grad_group() / expert_shard;
        if (expert_replicas > 1 && expert_grads > Bytes(0)) {
          c.reduce_scatter += comm::collective_time(
              comm::Collective::kAllReduce, Bytes(ceil_div(expert_grads.count(), expert_shard)),
              expert_replicas, setup.links.inter);
        }
      }
    }
  };

  std::vector<StagePlan> stages(static_cast<std::size_t>(plan.pp));
  for (int vs = 0; vs < virtual_stages; ++vs) {
    StagePlan& stage = stages[static_cast<std::size_t>(vs % plan.pp)];
    BlockCoster coster(cm, compute_dtype(plan.precision), e, dropout, attention_shape);
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
          with_tokens(gemms[li], s * b),
          plan.attention_pairs_per_sequence(spec.layers[li].sliding_window) *
              static_cast<double>(b) / static_cast<double>(plan.cp),
          Bytes(s * b * elementwise_bytes_per_token(spec, plan.kernels, e, h_rep, t, moe_layer))};
      if (plan.attention == Attention::kEager) {
        fwd.score_matrices = b * attention_shape.num_q_heads;
        fwd.seq = s;
        fwd.head_dim = spec.head_dim;
      }
      const LayerActivations& acts = moe_layer ? moe_acts : dense_acts;
      VRAMSIM_CHECK(plan.checkpointing.kind != CheckpointKind::kSelectiveOp ||
                        (!moe_layer && plan.tp == 1),
                    "selective-op on a MoE layer or with tp > 1");
      const Recompute recompute = assign_layer_memory(acts, plan.checkpointing, layer, c);
      if (ring) {
        // The chunk being used and the one arriving; in backward K, V and their gradients.
        c.forward_transient += 2 * kv_chunk;
        c.backward_transient += 4 * kv_chunk;
      } else if (ulysses) {
        // The all-to-all's output beside its input: Q, K, V once more.
        const Bytes qkv(e * s * b * ceil_div(spec.q_width() + 2 * spec.kv_width(), t));
        c.forward_transient += qkv;
        c.backward_transient += qkv;
      }
      if (lb) {
        // The adapters' own saved tensors, re-created with the layer when it is recomputed;
        // the dequantized weight of one matrix at a time, while its GEMM runs.
        const Bytes adapter_acts(s * b * lb->adapter_activation_bytes_per_token);
        if (plan.checkpointing.layer_recomputed(layer)) {
          c.rematerialized += adapter_acts;
        } else {
          c.stored += adapter_acts;
        }
        c.forward_transient += lb->largest_dequantized;
        c.backward_transient += lb->largest_dequantized;
      }
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
      c.stored = loss.stored;
      c.forward_transient = loss.forward_transient;
      c.backward_transient = loss.backward_transient;
      c.stored_tensors = loss.stored_tensors;
      c.forward_tensors = loss.forward_tensors;
      c.backward_tensors = loss.backward_tensors;
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
