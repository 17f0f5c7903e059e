#include "sim/training/lora.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::training {

namespace {

using model::TensorKind;

bool is_norm(const model::WeightTensor& t) {
  return t.kind == TensorKind::kVector && t.name.find("norm") != std::string_view::npos;
}

bool is_decoder_linear(const model::WeightTensor& t, std::int64_t num_layers) {
  return t.layer >= 0 && t.layer < num_layers &&
         (t.kind == TensorKind::kLinear || t.kind == TensorKind::kExpertLinear);
}

// Whether a base tensor is trained under `lora` (tied: the lm_head shares the embedding).
bool base_trainable(const model::WeightTensor& t, const Lora& lora, bool tied) {
  switch (t.kind) {
    case TensorKind::kEmbedding:
      return lora.train_embeddings || (tied && lora.train_lm_head);
    case TensorKind::kLmHead:
      return lora.train_lm_head;
    case TensorKind::kVector:
      return lora.train_norms && is_norm(t);
    case TensorKind::kPositionEmbedding:
    case TensorKind::kLinear:
    case TensorKind::kExpertLinear:
    case TensorKind::kRouter:
    case TensorKind::kVision:
      return false;
  }
  VRAMSIM_UNREACHABLE("invalid TensorKind");
}

}  // namespace

Bytes quantized_matrix_bytes(BaseQuant q, bool double_quant, std::int64_t in_features,
                             std::int64_t out_features) {
  VRAMSIM_CHECK(in_features >= 0 && out_features >= 0, "bad matrix shape");
  const std::int64_t n = in_features * out_features;
  switch (q) {
    case BaseQuant::kNone:
      break;
    case BaseQuant::kNf4:
    case BaseQuant::kFp4: {
      constexpr std::int64_t kBlock = 64, kBlock2 = 256, kFp32 = 4, kCodeEntries = 16;
      const std::int64_t blocks = ceil_div(n, kBlock);
      const std::int64_t absmax =
          double_quant ? blocks + kFp32 * ceil_div(blocks, kBlock2) + kFp32 : kFp32 * blocks;
      return Bytes(ceil_div(n, 2) + absmax + kFp32 * kCodeEntries);
    }
    case BaseQuant::kInt8:
      return Bytes(n + 4 * out_features);
  }
  VRAMSIM_UNREACHABLE("quantized_matrix_bytes of an unquantized base");
}

LoraParamCount count_lora_params(const model::ModelSpec& spec, const TrainingPlan& plan) {
  LoraParamCount c;
  const Lora& lora = plan.lora;
  c.all = model::count_params(spec).total;
  if (!lora.enabled()) {
    c.trainable = c.all;
    return c;
  }
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (is_decoder_linear(t, spec.num_layers) && lora.targets_module(t.name)) {
      c.adapters += lora.rank * (t.in_features + t.out_features) * t.copies;
    }
    if (base_trainable(t, lora, spec.tie_word_embeddings)) c.trainable += t.numel();
  }
  c.trainable += c.adapters;
  c.all += c.adapters;
  return c;
}

std::vector<LoraBlock> lora_blocks(const model::ModelSpec& spec, const TrainingPlan& plan,
                                   std::int64_t element_bytes, bool head_holds_embedding) {
  const Lora& lora = plan.lora;
  VRAMSIM_CHECK(lora.enabled(), "lora_blocks without LoRA");
  const std::int64_t e = element_bytes;
  std::vector<LoraBlock> blocks(static_cast<std::size_t>(spec.num_layers + 2));
  const auto block_of = [&](std::int64_t layer) -> LoraBlock& {
    const std::int64_t i = std::clamp<std::int64_t>(layer + 1, 0, spec.num_layers + 1);
    return blocks[static_cast<std::size_t>(i)];
  };
  const auto add_base = [&](LoraBlock& b, const model::WeightTensor& t, bool quantize) {
    const model::ShardShape sh = model::shard_shape(spec, t, plan.tp);
    const std::int64_t numel = t.tied ? 0 : sh.in_features * sh.out_features * sh.copies;
    if (base_trainable(t, lora, spec.tie_word_embeddings)) {
      b.trainable += numel;
      if (t.matmul) b.base_matmul_trainable = true;
      return;
    }
    b.frozen += numel;
    if (quantize && numel > 0) {
      const Bytes q = sh.copies * quantized_matrix_bytes(plan.base_quant, plan.double_quant,
                                                         sh.in_features, sh.out_features);
      b.quantized += numel;
      b.quantized_bytes += q;
      b.frozen_bytes += q;
      b.largest_dequantized =
          max(b.largest_dequantized, Bytes(sh.in_features * sh.out_features * e));
    } else {
      b.frozen_bytes += Bytes(numel * e);
    }
  };
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    LoraBlock& b = block_of(t.layer);
    const bool decoder_linear = is_decoder_linear(t, spec.num_layers);
    add_base(b, t, decoder_linear && plan.base_quant != BaseQuant::kNone);
    if (head_holds_embedding && t.kind == TensorKind::kEmbedding) {
      add_base(block_of(spec.num_layers), t, false);
    }
    if (!decoder_linear || !lora.targets_module(t.name)) continue;
    const model::ShardShape sh = model::shard_shape(spec, t, plan.tp);
    const bool routed = t.copies > t.active_copies;
    b.adapters.push_back(
        {sh.in_features, sh.out_features, static_cast<double>(sh.copies),
         routed ? static_cast<double>(t.active_copies) / static_cast<double>(t.copies) : 0.0});
    b.trainable += lora.rank * (sh.in_features + sh.out_features) * sh.copies;
    std::int64_t per_token = lora.rank * e;
    if (lora.dropout > 0.0) per_token += sh.in_features * (e + 1);
    b.adapter_activation_bytes_per_token += per_token * t.active_copies;
  }
  return blocks;
}

}  // namespace vramsim::training
