// What DeepSpeed allocates beside the model state (the ZeRO stages' reduction buckets, the
// optimizer step's fp32 gradients, stage 0's conversion) and which blocks ZeRO-3 keeps gathered
// from forward to backward: deepspeed/runtime/zero/stage3.py, stage_1_and_2.py,
// partitioned_param_coordinator.py and fp16/fused_optimizer.py at deepspeedai/DeepSpeed edaa722.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/training/model_state.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

/// Sets `stage`'s ipg_buckets and optimizer_transient for a plan DeepSpeed runs
/// (framework_in_use() == Framework::kDeepspeed), from the bytes per parameter and the dense
/// parameters of the stage (its routed experts are stage.expert_params).
void plan_deepspeed_buffers(StagePlan& stage, const TrainingPlan& plan, const BytesPerParam& per,
                            std::int64_t dense_params);

/// Sets kept_gathered on the blocks (one model chunk, forward order) that ZeRO-3 keeps
/// gathered from their forward to their backward under `max_reuse_distance` elements;
/// `tied_head` is what the last block (the head) uses besides its own parameters.
void mark_kept_gathered(std::vector<BlockCosts>& blocks, std::int64_t max_reuse_distance,
                        std::int64_t tied_head);

}  // namespace vramsim::training
