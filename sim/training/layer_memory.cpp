#include "sim/training/layer_memory.hpp"

#include "sim/core/check.hpp"

namespace vramsim::training {

Recompute assign_layer_memory(const LayerActivations& acts, const Checkpointing& ckpt,
                              std::int64_t layer, BlockCosts& c) {
  c.stored = stored_activation_bytes(acts, ckpt, layer);
  c.stored_tensors = stored_activation_tensors(acts, ckpt, layer);
  // What the recompute re-creates: the tensors of the full forward that were not kept.
  c.rematerialized_tensors = tensors_without(acts.none_tensors, c.stored_tensors);
  c.backward_transient = acts.backward_transient;
  c.backward_tensors = acts.backward_tensors;
  if (ckpt.layer_recomputed(layer)) {
    c.rematerialized = acts.stored_none - acts.stored_full;
    c.forward_transient = acts.recompute_peak;
    c.forward_tensors = acts.recompute_tensors;
    return Recompute::kFull;
  }
  switch (ckpt.kind) {
    case CheckpointKind::kSelective:
      c.rematerialized = acts.stored_none - acts.stored_selective;
      return Recompute::kAttention;
    case CheckpointKind::kSelectiveOp:
      // The recompute re-creates what was not kept, the layer's forward intermediates alive
      // as under full recompute.
      c.rematerialized = acts.stored_none - acts.stored_selective_op;
      c.forward_transient = acts.recompute_peak;
      c.forward_tensors = acts.recompute_tensors;
      return Recompute::kOps;
    case CheckpointKind::kNone:
    case CheckpointKind::kFull:
    case CheckpointKind::kEveryK:
      return Recompute::kNone;  // a recomputed layer of kFull / kEveryK returned above
  }
  VRAMSIM_UNREACHABLE("invalid CheckpointKind");
}

}  // namespace vramsim::training
