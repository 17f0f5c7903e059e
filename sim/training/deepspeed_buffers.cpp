// DeepSpeed's own buffers and ZeRO-3's parameter reuse (deepspeed_buffers.hpp).
#include "sim/training/deepspeed_buffers.hpp"

#include <algorithm>

namespace vramsim::training {

// DeepSpeed ZeRO's own buffers beside the model state (deepspeed/runtime/zero/stage3.py and
// stage_1_and_2.py at edaa722):
// - The gradient reduction (IPG) bucket of reduce_bucket_size elements in the model dtype, a
//   flat buffer when contiguous_gradients is on: ZeRO-3 allocates one at start-up
//   (_setup_for_real_optimizer, one per gradient dtype); ZeRO-1/2 one per backward, two under
//   overlap_comm ("double buffers to avoid data access conflict"), freed when the backward's
//   reductions end. Without contiguous_gradients the bucket's gradients are flattened when it
//   is reduced, a copy of the same size, not counted here.
// - The optimizer step converts the gradients to the master weights' dtype one group at a
//   time: ZeRO-3 per sub-group (_prepare_fp32_grad_for_sub_group: flatten, then .to(fp32)),
//   ZeRO-1/2 per parameter group (step: flat_grad_partition.to(fp32)). While the conversion
//   runs the flattened copy and the fp32 copy are both alive; the fp32 copy lives until that
//   group's update ends. Dense and routed-expert parameters are separate groups. With the
//   optimizer offloaded the conversion happens on the host.
void plan_deepspeed_buffers(StagePlan& stage, const TrainingPlan& plan, const BytesPerParam& per,
                            std::int64_t dense_params) {
  constexpr std::int64_t kFp32 = 4;
  if (plan.strategy == Strategy::kDdp) {
    // Stage 0. FP16_Optimizer (fp16, and bf16 without ZeRO) converts each parameter group's
    // gradients at the step: every gradient .to(fp32) into a list, then flattened into one
    // fp32 tensor, both alive while it flattens (fp16/fused_optimizer.py, step). fp32 runs the
    // optimizer on its own gradients.
    if (per.master > 0 && !plan.offload_optimizer) {
      const std::int64_t largest_group = std::max(dense_params, stage.expert_params);
      stage.optimizer_transient = Bytes(largest_group * 2 * kFp32);
    }
    return;
  }
  if (plan.contiguous_gradients) {
    const std::int64_t buffers = plan.strategy != Strategy::kZero3 && plan.overlap_comm ? 2 : 1;
    stage.ipg_buckets = Bytes(buffers * plan.reduce_bucket_size * per.grads);
  }
  if (plan.offload_optimizer) return;
  const std::int64_t largest_group =
      std::max(ceil_div(dense_params, plan.shard_degree()),
               ceil_div(stage.expert_params, plan.expert_shard_degree()));
  const std::int64_t converted = plan.strategy == Strategy::kZero3
                                     ? std::min(plan.sub_group_size, largest_group)
                                     : largest_group;
  stage.optimizer_transient = Bytes(converted * (per.grads + (per.master > 0 ? kFp32 : 0)));
}


// DeepSpeed ZeRO-3 releases a module's gathered parameters after use unless its trace shows
// them used again within stage3_max_reuse_distance parameter elements
// (partitioned_param_coordinator.py, __params_to_release: it walks the modules after the
// current one, adding up their parameters, until the sum reaches the distance). Between a
// block's forward and its backward run the forward and the backward of every later block, so
// a block stays gathered when twice the later blocks' parameters are within the distance: the
// head always (its backward follows at once), the last layers of small enough models too.
// NOTE: DeepSpeed decides per leaf module, whose walk also crosses the rest of its own block;
// at block granularity that is left out. Pipeline stages are not handled: DeepSpeed refuses
// ZeRO-2 and ZeRO-3 with pipeline parallelism (runtime/pipe/engine.py). `tied_head` is what the
// last block (the head) uses besides its own parameters: a tied embedding.
void mark_kept_gathered(std::vector<BlockCosts>& blocks, std::int64_t max_reuse_distance,
                        std::int64_t tied_head) {
  std::int64_t later = 0;
  for (std::size_t i = blocks.size(); i-- > 0;) {
    blocks[i].kept_gathered = 2 * later < max_reuse_distance;
    later += blocks[i].num_params + (i + 1 == blocks.size() ? tied_head : 0);
  }
}


}  // namespace vramsim::training
