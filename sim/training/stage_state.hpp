// The state of a pipeline stage besides its blocks (plan_stages, stage_plan.cpp): the model
// state per strategy and precision; what offload moves to host memory and NVMe (DeepSpeed's
// ZeRO-Offload and ZeRO-Infinity, FSDP's CPUOffload, bitsandbytes' paged optimizers) and the
// PCIe, CPU Adam and NVMe time of the offloaded step; LoRA's frozen base; PyTorch DDP's
// gradient buckets; the optimizer step on the device; ZeRO-1/2's parameter all-gather.
#pragma once

#include "sim/cost/cost_model.hpp"
#include "sim/training/cluster_links.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

/// Fills `stage`'s state, host and NVMe bytes, DDP buckets and optimizer or offloaded-step
/// times from its parameter counts (num_params, trainable_params, expert_params and
/// frozen_weights, set by plan_stages).
void plan_stage_state(StagePlan& stage, const TrainingSetup& setup, const cost::CostModel& cm,
                      PlanCollectives& collectives);

}  // namespace vramsim::training
