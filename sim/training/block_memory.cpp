// block_memory.hpp: the activations and buffers of a block for one micro-batch.
#include "sim/training/block_memory.hpp"

#include "sim/core/check.hpp"

namespace vramsim::training::detail {

Recompute assign_decoder_layer_memory(BlockCosts& c, const LayerActivations& acts,
                                      const model::ModelSpec& spec, const TrainingPlan& plan,
                                      std::int64_t layer, const LoraBlock* lb,
                                      const BlockShape& shape) {
  const bool moe_layer = spec.layers[static_cast<std::size_t>(layer)].moe;
  VRAMSIM_CHECK(plan.checkpointing.kind != CheckpointKind::kSelectiveOp ||
                    (!moe_layer && plan.tp == 1),
                "selective-op on a MoE layer or with tp > 1");
  const Recompute recompute = assign_layer_memory(acts, plan.checkpointing, layer, c);
  if (shape.ring) {
    // The chunk being used and the one arriving; in backward K, V and their gradients.
    c.forward_transient += 2 * shape.kv_chunk;
    c.backward_transient += 4 * shape.kv_chunk;
  } else if (shape.ulysses) {
    // The all-to-all's output beside its input: Q, K, V once more.
    const Bytes qkv(shape.e * shape.s * shape.b *
                    ceil_div(spec.q_width() + 2 * spec.kv_width(), shape.t));
    c.forward_transient += qkv;
    c.backward_transient += qkv;
  }
  if (lb) {
    // The adapters' own saved tensors, re-created with the layer when it is recomputed;
    // the dequantized weight of one matrix at a time, while its GEMM runs.
    const Bytes adapter_acts(shape.s * shape.b * lb->adapter_activation_bytes_per_token);
    if (plan.checkpointing.layer_recomputed(layer)) {
      c.rematerialized += adapter_acts;
    } else {
      c.stored += adapter_acts;
    }
    c.forward_transient += lb->largest_dequantized;
    c.backward_transient += lb->largest_dequantized;
  }
  return recompute;
}

// torch.autocast caches each weight's bf16 copy until the forward's autocast region exits
// (torch/csrc/autograd/autocast_mode.cpp caches casts of leaf tensors that require grad); the
// matmul's autograd node saves it for backward. A recomputed block casts again and keeps the
// new copy for its backward.
void keep_autocast_copies(BlockCosts& c, Bytes cast, Recompute recompute) {
  if (recompute == Recompute::kFull) {
    c.autocast_cache += cast;
    c.rematerialized += cast;
  } else {
    c.stored += cast;
  }
}

void assign_loss_memory(BlockCosts& c, const LossMemory& loss) {
  c.stored = loss.stored;
  c.forward_transient = loss.forward_transient;
  c.backward_transient = loss.backward_transient;
  c.stored_tensors = loss.stored_tensors;
  c.forward_tensors = loss.forward_tensors;
  c.backward_tensors = loss.backward_tensors;
}

}  // namespace vramsim::training::detail
