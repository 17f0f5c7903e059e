#include "sim/training/activation_memory.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/core/check.hpp"

namespace vramsim::training {

Bytes korthikanti_layer_bytes(const KorthikantiShape& k, KorthikantiVariant variant) {
  const double sbh = static_cast<double>(k.s) * static_cast<double>(k.b) * static_cast<double>(k.h);
  const double t = static_cast<double>(k.t);
  const double attn = 5.0 * static_cast<double>(k.a) * static_cast<double>(k.s) /
                      static_cast<double>(k.h);  // the 5as/h term
  switch (variant) {
    case KorthikantiVariant::kNoParallelism:
      return round_to_bytes(sbh * (34.0 + attn));
    case KorthikantiVariant::kTensorParallel:
      return round_to_bytes(sbh * (10.0 + 24.0 / t + attn / t));
    case KorthikantiVariant::kTensorSequenceParallel:
      return round_to_bytes(sbh * (34.0 / t + attn / t));
    case KorthikantiVariant::kTensorParallelSelective:
      return round_to_bytes(sbh * (10.0 + 24.0 / t));
    case KorthikantiVariant::kTensorSequenceParallelSelective:
      return round_to_bytes(sbh * (34.0 / t));
    case KorthikantiVariant::kFullRecompute:
      return round_to_bytes(sbh * 2.0);
  }
  VRAMSIM_UNREACHABLE("invalid KorthikantiVariant");
}

LayerActivations layer_activations(const model::ModelSpec& spec, const ActivationShape& shape,
                                   bool moe_layer) {
  VRAMSIM_CHECK(shape.tp >= 1 && shape.seq_len >= 1 && shape.micro_batch >= 1,
                "bad activation shape");
  VRAMSIM_CHECK(!moe_layer || spec.moe.has_value(), "a MoE layer of a dense model");
  const std::int64_t t = shape.tp;
  const std::int64_t e = shape.element_bytes;
  const std::int64_t sb = shape.seq_len * shape.micro_batch;
  // Terms replicated over the TP group unless sequence parallelism splits them.
  const std::int64_t h_rep =
      shape.sequence_parallel ? ceil_div(spec.hidden_size, t) : spec.hidden_size;
  const std::int64_t residual = e * sb * h_rep;
  const std::int64_t qkv = e * sb * (spec.q_width() + 2 * spec.kv_width()) / t;
  const std::int64_t attn_out = e * sb * spec.q_width() / t;
  const std::int64_t heads = spec.num_attention_heads / t;
  // Eager: the probabilities (e), with dropout also its mask (1) and output (e) per score.
  const std::int64_t per_score = shape.dropout ? 2 * e + 1 : e;
  const std::int64_t core =
      shape.flash_attention
          ? 4 * shape.micro_batch * shape.seq_len * heads
          : per_score * shape.micro_batch * heads * shape.seq_len * shape.seq_len;
  // The residual branches' two dropout masks, one byte per element.
  const std::int64_t masks = shape.dropout ? 2 * sb * h_rep : 0;
  const std::int64_t widths = spec.mlp == model::MlpKind::kGated ? 4 : 2;
  std::int64_t mlp_inner = 0;       // stored inside the MLP beyond its (norm output) input
  std::int64_t mlp_grad_width = 0;  // per token: gate/up gradient widths alive in backward
  if (moe_layer) {
    const model::MoeSpec& m = *spec.moe;
    const std::int64_t k = m.num_experts_per_tok;
    // The routed part scaled by this rank's load (imbalance, capacity), the shared expert not.
    const std::int64_t routed =
        std::llround(static_cast<double>(k * m.expert_intermediate_size) * shape.routed_load) +
        m.shared_intermediate_size;
    const std::int64_t copies =
        std::llround(static_cast<double>(2 * e * sb * k * spec.hidden_size) * shape.routed_load);
    // Router probabilities (fp32), split like the residual under SP; each token's k dispatched
    // copies (the experts' inputs) and the k expert outputs the weighted combine reads back
    // (Megatron's token dispatcher gathers the whole TP group's tokens before the experts).
    const std::int64_t router = 4 * sb * m.num_experts / (shape.sequence_parallel ? t : 1);
    mlp_inner = e * sb * widths * routed / t + copies + router;
    mlp_grad_width = 2 * routed / t + k * spec.hidden_size;
  } else {
    mlp_inner = e * sb * widths * spec.intermediate_size / t;
    mlp_grad_width = 2 * spec.intermediate_size / t;
  }

  LayerActivations a;
  // attention norm input + output, MLP norm input + output: four residual-width tensors.
  a.stored_none = Bytes(4 * residual + qkv + attn_out + core + mlp_inner + masks);
  a.stored_selective = Bytes(4 * residual + qkv + attn_out + mlp_inner + masks);
  a.stored_full = Bytes(residual);
  // The same as tensors, in the order the forward creates them: the norm's input and output,
  // Q, K, V, the attention core's saved tensors, its output, the first residual branch's
  // dropout mask, the MLP norm's input and output, the MLP's inner tensors, the second mask.
  const std::int64_t scores = shape.micro_batch * heads * shape.seq_len * shape.seq_len;
  std::vector<Bytes> core_tensors;
  if (shape.flash_attention) {
    core_tensors = {Bytes(core)};
  } else if (shape.dropout) {  // the probabilities, their dropout mask and its output
    core_tensors = {Bytes(e * scores), Bytes(scores), Bytes(e * scores)};
  } else {
    core_tensors = {Bytes(core)};
  }
  std::vector<Bytes> inner;  // the MLP's (or experts') saved tensors, in forward order
  if (moe_layer) {
    const model::MoeSpec& m = *spec.moe;
    const std::int64_t routed = std::llround(static_cast<double>(m.num_experts_per_tok *
                                                                 m.expert_intermediate_size) *
                                             shape.routed_load) +
                                m.shared_intermediate_size;
    inner.push_back(Bytes(4 * sb * m.num_experts / (shape.sequence_parallel ? t : 1)));
    const std::int64_t copies = std::llround(
        static_cast<double>(2 * e * sb * m.num_experts_per_tok * spec.hidden_size) *
        shape.routed_load);
    inner.push_back(Bytes(copies / 2));  // the dispatched copies, then the experts' outputs
    for (std::int64_t w = 0; w < widths; ++w) inner.push_back(Bytes(e * sb * routed / t));
  } else {
    for (std::int64_t w = 0; w < widths; ++w) {
      inner.push_back(Bytes(e * sb * spec.intermediate_size / t));
    }
  }
  const Bytes mask(shape.dropout ? sb * h_rep : 0);
  std::vector<Bytes> none{Bytes(residual), Bytes(residual), Bytes(e * sb * spec.q_width() / t),
                         Bytes(e * sb * spec.kv_width() / t), Bytes(e * sb * spec.kv_width() / t)};
  const std::size_t core_at = none.size();
  none.insert(none.end(), core_tensors.begin(), core_tensors.end());
  none.push_back(Bytes(attn_out));
  if (mask > Bytes(0)) none.push_back(mask);
  none.push_back(Bytes(residual));
  none.push_back(Bytes(residual));
  none.insert(none.end(), inner.begin(), inner.end());
  if (mask > Bytes(0)) none.push_back(mask);
  std::vector<Bytes> selective = none;
  selective.erase(selective.begin() + static_cast<std::ptrdiff_t>(core_at),
                  selective.begin() + static_cast<std::ptrdiff_t>(core_at + core_tensors.size()));
  a.none_tensors = split_into_tensors(a.stored_none, none);
  a.selective_tensors = split_into_tensors(a.stored_selective, selective);
  a.full_tensors = split_into_tensors(a.stored_full, {Bytes(residual)});
  if (!moe_layer) {
    // torchtitan's op-level SAC: the block input, every other matmul output in call order,
    // SDPA's output and its log-sum-exp (the file comment, part 3).
    const std::vector<SelectiveOpMatmul> matmuls = selective_op_matmuls(spec);
    std::int64_t kept = 0;
    std::vector<Bytes> kept_tensors{Bytes(residual)};
    for (std::size_t i = 0; i < matmuls.size(); i += 2) {
      kept += matmuls[i].out_features;
      kept_tensors.push_back(Bytes(e * sb * matmuls[i].out_features / t));
      if (i == 2) {  // SDPA runs after wv (the third matmul): its output and log-sum-exp
        kept_tensors.push_back(Bytes(e * sb * spec.q_width() / t));
        kept_tensors.push_back(Bytes(4 * shape.micro_batch * shape.seq_len * heads));
      }
    }
    const std::int64_t lse = 4 * shape.micro_batch * shape.seq_len * heads;
    a.stored_selective_op = Bytes(residual + e * sb * (kept + spec.q_width()) / t + lse);
    a.selective_op_tensors = split_into_tensors(a.stored_selective_op, kept_tensors);
  }
  a.recompute_peak = Bytes(2 * residual + mlp_inner);
  std::vector<Bytes> recompute{Bytes(residual), Bytes(residual)};
  recompute.insert(recompute.end(), inner.begin(), inner.end());
  a.recompute_tensors = split_into_tensors(a.recompute_peak, recompute);
  a.backward_transient = Bytes(e * sb * (mlp_grad_width + spec.hidden_size));
  // The MLP's two inner gradients (gate and up, or the experts' and their routed copies'),
  // then the layer's input gradient.
  std::vector<Bytes> backward;
  if (moe_layer) {
    const std::int64_t k = spec.moe->num_experts_per_tok;
    const std::int64_t inner_width = (mlp_grad_width - k * spec.hidden_size) / 2;
    backward = {Bytes(e * sb * inner_width), Bytes(e * sb * inner_width),
                Bytes(e * sb * k * spec.hidden_size)};
  } else {
    backward = {Bytes(e * sb * mlp_grad_width / 2), Bytes(e * sb * mlp_grad_width / 2)};
  }
  backward.push_back(Bytes(e * sb * spec.hidden_size));
  a.backward_tensors = split_into_tensors(a.backward_transient, backward);
  return a;
}

std::vector<Bytes> split_into_tensors(Bytes total, const std::vector<Bytes>& tensors) {
  std::vector<Bytes> out;
  Bytes left = total;
  for (const Bytes t : tensors) {
    if (t <= Bytes(0)) continue;
    if (t > left) break;
    out.push_back(t);
    left -= t;
  }
  if (left > Bytes(0)) out.push_back(left);
  return out;
}

std::vector<Bytes> tensors_without(const std::vector<Bytes>& all,
                                   const std::vector<Bytes>& removed) {
  std::vector<bool> gone(all.size(), false);
  for (const Bytes r : removed) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!gone[i] && all[i] == r) {
        gone[i] = true;
        break;
      }
    }
  }
  std::vector<Bytes> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!gone[i]) out.push_back(all[i]);
  }
  return out;
}

std::vector<SelectiveOpMatmul> selective_op_matmuls(const model::ModelSpec& spec) {
  const std::int64_t h = spec.hidden_size, q = spec.q_width(), kv = spec.kv_width();
  const std::int64_t inner = spec.intermediate_size;
  std::vector<SelectiveOpMatmul> out{{q, h}, {kv, h}, {kv, h}, {h, q}};
  if (spec.mlp == model::MlpKind::kGated) out.push_back({inner, h});
  out.push_back({inner, h});
  out.push_back({h, inner});
  return out;
}

Bytes stored_activation_bytes(const LayerActivations& acts, const Checkpointing& ckpt,
                              std::int64_t layer) {
  switch (ckpt.kind) {
    case CheckpointKind::kNone:
      return acts.stored_none;
    case CheckpointKind::kSelective:
      return acts.stored_selective;
    case CheckpointKind::kFull:
      return acts.stored_full;
    case CheckpointKind::kEveryK:
      return ckpt.layer_recomputed(layer) ? acts.stored_full : acts.stored_none;
    case CheckpointKind::kSelectiveOp:
      return acts.stored_selective_op;
  }
  VRAMSIM_UNREACHABLE("invalid CheckpointKind");
}

const std::vector<Bytes>& stored_activation_tensors(const LayerActivations& acts,
                                                    const Checkpointing& ckpt,
                                                    std::int64_t layer) {
  switch (ckpt.kind) {
    case CheckpointKind::kNone:
      return acts.none_tensors;
    case CheckpointKind::kSelective:
      return acts.selective_tensors;
    case CheckpointKind::kFull:
      return acts.full_tensors;
    case CheckpointKind::kEveryK:
      return ckpt.layer_recomputed(layer) ? acts.full_tensors : acts.none_tensors;
    case CheckpointKind::kSelectiveOp:
      return acts.selective_op_tensors;
  }
  VRAMSIM_UNREACHABLE("invalid CheckpointKind");
}

LossMemory loss_memory(const model::ModelSpec& spec, const ActivationShape& shape,
                       const Loss& loss) {
  constexpr std::int64_t kFp32 = 4;
  const std::int64_t tokens = shape.seq_len * shape.micro_batch;
  const std::int64_t vocab = ceil_div(spec.vocab_size, shape.tp);
  const std::int64_t e = shape.element_bytes;
  const std::int64_t u = e < kFp32 ? kFp32 : 0;  // logits.float() copies
  const std::int64_t all = tokens * vocab;
  LossMemory m;
  switch (loss.kind) {
    case LossKind::kVocabParallel:
      m.stored = Bytes(kFp32 * all);
      m.forward_transient = Bytes(e * all);
      m.backward_transient = Bytes(kFp32 * all);
      m.stored_tensors = {m.stored};
      m.forward_tensors = {m.forward_transient};
      m.backward_tensors = {m.backward_transient};
      m.forward_traffic = 2 * m.stored;  // the fp32 logits written and read once
      m.backward_traffic = 2 * m.forward_traffic;
      return m;
    case LossKind::kFull:
      m.stored = Bytes(kFp32 * all);
      m.forward_transient = Bytes((e + u) * all);
      m.backward_transient = Bytes(2 * kFp32 * all);
      m.stored_tensors = {m.stored};
      m.forward_tensors = split_into_tensors(m.forward_transient, {Bytes(e * all)});
      m.backward_tensors = {Bytes(kFp32 * all), Bytes(kFp32 * all)};
      // Forward: the upcast reads e and writes u, log_softmax reads and writes fp32. Backward:
      // nll_loss writes its gradient, log_softmax's reads it and its output and writes its own,
      // the cast reads that and writes e.
      m.forward_traffic = Bytes(((u > 0 ? e + u : 0) + 2 * kFp32) * all);
      m.backward_traffic = Bytes((4 * kFp32 + (u > 0 ? kFp32 + e : 0)) * all);
      return m;
    case LossKind::kChunked: {
      VRAMSIM_CHECK(loss.chunks >= 1, "chunked:N with N = {}", loss.chunks);
      // h.chunk(N, dim=1): each chunk b x ceil(s / N) tokens.
      const std::int64_t chunk =
          shape.micro_batch * ceil_div(shape.seq_len, std::int64_t{loss.chunks}) * vocab;
      m.stored = Bytes(e * all);
      m.forward_transient = Bytes(u * chunk);
      m.backward_transient = Bytes((kFp32 + (u > 0 ? e : 0)) * chunk);
      // Each chunk's logits are a tensor of their own (the last one what is left).
      m.stored_tensors = split_into_tensors(
          m.stored, std::vector<Bytes>(static_cast<std::size_t>(loss.chunks), Bytes(e * chunk)));
      m.forward_tensors = split_into_tensors(m.forward_transient, {m.forward_transient});
      m.backward_tensors = split_into_tensors(m.backward_transient, {Bytes(kFp32 * chunk)});
      // Forward: the logits read, their fp32 upcast written and read. Backward: the logits
      // read, the fp32 gradient written and read, its cast written.
      m.forward_traffic = Bytes((e + 2 * u) * all);
      m.backward_traffic = Bytes((e + 2 * kFp32 + (u > 0 ? e : 0)) * all);
      return m;
    }
    case LossKind::kFused: {
      // Liger: inc_factor = cdiv(V, H); chunk_size = next_power_of_2(cdiv(BT, inc_factor)).
      const std::int64_t inc = ceil_div(vocab, spec.embed_dim);
      std::int64_t chunk = 1;
      while (chunk < ceil_div(tokens, inc)) chunk *= 2;
      chunk = std::min(chunk, tokens);
      m.stored = Bytes(e * tokens * spec.embed_dim);
      m.forward_transient = Bytes(e * chunk * vocab);
      m.backward_transient = Bytes(0);
      m.stored_tensors = {m.stored};
      m.forward_tensors = {m.forward_transient};
      m.forward_traffic = Bytes(2 * e * all);  // the kernel reads the logits, writes the gradient
      m.backward_traffic = Bytes(0);
      return m;
    }
  }
  VRAMSIM_UNREACHABLE("invalid LossKind");
}

}  // namespace vramsim::training
