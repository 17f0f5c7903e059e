// What one decoder layer holds for one micro-batch on one TP rank under the plan's
// checkpointing policy: the totals of activation_memory.hpp picked for the policy and the
// tensors they are made of, each its own request to the caching allocator.
//
//   stored          kept from the forward to the backward
//   rematerialized  re-created by the recompute in backward: the full forward's saved tensors
//                   that the policy did not keep
//   forward         alive at once at the forward's peak (a recomputed layer's intermediates)
//   backward        the backward's own gradient buffers
#pragma once

#include <cstdint>

#include "sim/training/activation_memory.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

/// What a layer's backward runs of its forward again: nothing, all of it, the attention core
/// (selective), or torchtitan's op-level choice (selective-op: the odd matmuls and every
/// memory-bound op).
enum class Recompute : std::uint8_t { kNone, kFull, kAttention, kOps };

/// Sets `c`'s stored, rematerialized, forward and backward bytes and their tensors for layer
/// `layer` under `ckpt` from the layer's activations `acts`; returns what its backward
/// recomputes.
Recompute assign_layer_memory(const LayerActivations& acts, const Checkpointing& ckpt,
                              std::int64_t layer, BlockCosts& c);

}  // namespace vramsim::training
