// block_compute.hpp: the GEMMs, attention core, memory-bound kernels and recompute of a block,
// timed through the cost model.
#include "sim/training/block_compute.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"
#include "sim/training/activation_memory.hpp"

namespace vramsim::training::detail {

namespace {

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

}  // namespace

DType compute_dtype(Precision p) {
  return p == Precision::kFp32        ? DType::kFp32
         : p == Precision::kFp16Mixed ? DType::kFp16
                                      : DType::kBf16;
}

Duration BlockCoster::linear_forward(const BlockWork& w, Bytes weights) {
  if (w.gemms.empty()) return take(cm_.memory_bound(weights));
  double seconds = 0;
  for (const Gemm& g : w.gemms) {
    seconds += g.count * take(cm_.matmul(dtype_, g.m, g.n, g.k)).seconds();
  }
  return Duration::from_seconds(seconds);
}

Duration BlockCoster::input_gradients(const BlockWork& w, Bytes weights) {
  if (w.gemms.empty()) return take(cm_.memory_bound(2 * weights));
  double seconds = 0;
  for (const Gemm& g : w.gemms) {
    seconds += g.count * take(cm_.matmul(dtype_, g.m, g.k, g.n)).seconds();
  }
  return Duration::from_seconds(seconds);
}

Duration BlockCoster::weight_gradients(const BlockWork& w) {
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
Duration BlockCoster::attention_forward(const BlockWork& w) {
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
Duration BlockCoster::attention_backward(const BlockWork& w) {
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

// Widths split by t where the tensor is TP-sharded; h_rep is h (h / t under SP). Rotary only
// where the model has it (no learned position table). The backward is taken as twice the
// forward.
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

SelectiveOpWork selective_op_work(const model::ModelSpec& spec, const TrainingPlan& plan,
                                  const BlockShape& shape) {
  SelectiveOpWork out;
  if (plan.checkpointing.kind == CheckpointKind::kSelectiveOp) {
    const std::vector<SelectiveOpMatmul> matmuls = selective_op_matmuls(spec);
    for (std::size_t i = 1; i < matmuls.size(); i += 2) {
      out.work.gemms.push_back(
          {shape.s * shape.b, matmuls[i].out_features, matmuls[i].in_features, 1.0});
      out.weights += Bytes(matmuls[i].out_features * matmuls[i].in_features * shape.e);
    }
  }
  return out;
}

BlockComputeTimes cost_block_compute(BlockCoster& coster, BlockCosts& c, const BlockWork& fwd,
                                     Bytes weights, const LoraBlock* lb, std::int64_t lora_rank,
                                     const BlockShape& shape) {
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
          coster.memory_bound(lb->quantized_bytes + Bytes(lb->quantized * shape.e));
      c.forward += dequantize;
      input_gradients += dequantize;
    }
    if (!lb->adapters.empty()) {
      const BlockWork adapters{with_tokens(adapter_gemms(*lb, lora_rank), shape.s * shape.b),
                               0.0, Bytes(0)};
      c.forward += coster.linear_forward(adapters, Bytes(0));
      input_gradients += coster.input_gradients(adapters, Bytes(0));
      weight_gradients += coster.weight_gradients(adapters);
    }
  }
  const Duration attention_backward = coster.attention_backward(fwd);
  c.backward = input_gradients + weight_gradients + attention_backward +
               coster.memory_bound(fwd.backward_elementwise.value_or(2 * fwd.elementwise));
  return {attention, attention_backward, weight_gradients};
}

Duration recompute_time(Recompute recompute, const BlockCosts& c, Duration attention,
                        const BlockShape& shape, BlockCoster& coster, const SelectiveOpWork& op,
                        const BlockWork& fwd) {
  switch (recompute) {
    case Recompute::kNone: return Duration::zero();
    // The whole forward again, its TP, CP and EP exchanges included (they block as in
    // forward).
    case Recompute::kFull: return c.forward + c.tp_forward + c.cp_forward + c.ep_forward;
    // The attention core again; under ring CP it needs the other ranks' K and V again (the
    // Ulysses all-to-alls sit outside the core: their outputs are what the core keeps).
    case Recompute::kAttention: return attention + (shape.ring ? c.cp_forward : Duration::zero());
    // SDPA's outputs are kept: the recomputed matmuls and the memory-bound ops between them.
    case Recompute::kOps:
      return coster.linear_forward(op.work, op.weights) + coster.memory_bound(fwd.elementwise);
  }
  VRAMSIM_UNREACHABLE("invalid Recompute");
}

}  // namespace vramsim::training::detail
