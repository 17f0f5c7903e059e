// The memory side of a block (plan_stages, stage_plan.cpp): what each block holds for one
// micro-batch on one TP rank besides its share of the model state.
//   decoder layer   its activations under the checkpointing policy (layer_memory.hpp), context
//                   parallelism's exchange buffers, LoRA's adapter activations and the
//                   dequantized weight of one quantized matrix at a time
//   any block       bf16-amp's cached bf16 copies of its weights (torch.autocast)
//   head            the logits and the loss (activation_memory.hpp, loss_memory)
// The costs of the same blocks are in block_compute.hpp and block_exchanges.hpp.
#pragma once

#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/block_shape.hpp"
#include "sim/training/layer_memory.hpp"
#include "sim/training/lora.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training::detail {

/// Sets decoder layer `layer`'s memory in `c` from its activations `acts` under the plan's
/// checkpointing, and adds context parallelism's buffers and (`lb` set) LoRA's; returns what
/// its backward recomputes. Checks that selective-op runs on a dense layer with tp = 1
/// (validated before: plan_validation.cpp).
Recompute assign_decoder_layer_memory(BlockCosts& c, const LayerActivations& acts,
                                      const model::ModelSpec& spec, const TrainingPlan& plan,
                                      std::int64_t layer, const LoraBlock* lb,
                                      const BlockShape& shape);

/// bf16-amp: keeps autocast's bf16 copies of the block's weights (`cast` bytes) where they
/// live, the forward pass's cache for a block recomputed in full (and again from its recompute
/// to its backward), its saved activations otherwise.
void keep_autocast_copies(BlockCosts& c, Bytes cast, Recompute recompute);

/// Sets the head block's stored and transient bytes, and their tensors, from the loss's.
void assign_loss_memory(BlockCosts& c, const LossMemory& loss);

}  // namespace vramsim::training::detail
