#include "sim/training/stage_state.hpp"

#include <algorithm>

#include "sim/training/deepspeed_buffers.hpp"
#include "sim/training/model_state.hpp"

namespace vramsim::training {

namespace {

// Bytes the optimizer step reads and writes per local parameter.
//   a fused Adam (PyTorch's fused=True, DeepSpeed's FusedAdam) over the model's gradients: read
//     the gradient, read and write the master weights and the states, write the working copy:
//       grads + params + 2 (master + states)                            (28 B for bf16 AdamW)
//   Megatron-LM, mixed precision (its DistributedOptimizer, megatron/core/optimizer:
//     gradients accumulated in fp32 main_grad buffers): the gradient-norm pass reads the fp32
//     gradients (4) and so does the inf/NaN check (4); Adam reads the gradient (4) and reads
//     and writes the fp32 master weights (8) and both states (16); the master weights are
//     copied into the 16-bit model parameters (read 4, write 2); the gradient buffer is zeroed
//     for the next step (4):                                             46 B for bf16 Adam
//   Without a separate master copy (bf16, fp32, bf16-amp) the parameters are the master: read
//     the gradient, read and write the parameters and the states: grads + 2 (params + states).
std::int64_t optimizer_step_bytes_per_param(const TrainingPlan& plan, const BytesPerParam& per) {
  const bool mixed =
      plan.precision == Precision::kBf16Mixed || plan.precision == Precision::kFp16Mixed;
  if (plan.framework_in_use() == Framework::kMegatron && mixed) {
    constexpr std::int64_t kFp32 = 4;
    return 2 * kFp32 + (kFp32 + 2 * (per.master + per.optimizer)) + (per.master + per.params) +
           kFp32;
  }
  // The tensor Adam updates: the master copy, or the parameters themselves.
  const std::int64_t updated = per.master > 0 ? per.master : per.params;
  if (plan.optimizer_impl == OptimizerImpl::kForeach) {
    // _multi_tensor_adamw, a pass per operation (M the updated tensor, S one state, G the
    // gradient): weight decay mul_ (2M), lerp_ of exp_avg (2S + G), mul_ and addcmul_ of
    // exp_avg_sq (2S, 2S + G), sqrt into a new tensor (2S), div_ and add_ on it (2S, 2S),
    // addcdiv_ into the parameters (2M + 2S): 4M + 12S + 2G, then the working copy.
    const std::int64_t state = per.optimizer / 2;
    return 4 * updated + 12 * state + 2 * per.grads + (per.master > 0 ? per.params : 0);
  }
  if (per.master == 0) return per.grads + 2 * (per.params + per.optimizer);
  return per.grads + per.params + 2 * (per.master + per.optimizer);
}

}  // namespace

void plan_stage_state(StagePlan& stage, const TrainingSetup& setup, const cost::CostModel& cm,
                      PlanCollectives& collectives) {
  const TrainingPlan& plan = setup.plan;
  const hardware::DeviceSpec& dev = setup.device;
  BytesPerParam per = bytes_per_param(plan.precision, plan.optimizer);
  per.grads = plan.grad_element_bytes();  // Megatron-LM: fp32 main gradients under bf16
  const int shard = plan.shard_degree();
  const int expert_shard = plan.expert_shard_degree();
  const bool lora = plan.lora.enabled();
  const bool params_offloaded = plan.offload_params != OffloadParams::kNone;
  const Bandwidth nvme = GBps(plan.nvme_gb_per_s);
  // The dense parameters sharded over the cp x dp group, the routed experts over theirs.
  const std::int64_t dense_params = stage.trainable_params - stage.expert_params;
  const auto state_of = [&](Precision precision, bool offload) {
    const std::int64_t grads = precision == plan.precision ? plan.grad_element_bytes() : 0;
    ModelState st = model_state_bytes(dense_params, plan.strategy, precision, plan.optimizer,
                                      shard, offload, grads);
    if (stage.expert_params > 0) {
      st += model_state_bytes(stage.expert_params, plan.strategy, precision, plan.optimizer,
                              expert_shard, offload, grads);
    }
    return st;
  };
  stage.state = state_of(plan.precision, plan.offload_optimizer);
  Bytes optimizer_on_nvme;  // ZeRO-Infinity: what the optimizer keeps on NVMe
  if (plan.offload_optimizer) {
    // What left the device: master weights and states as they were, and the gradient
    // partition in fp32 (DeepSpeed's ZeRO-Offload accumulates fp32 gradients on the host:
    // stage_1_and_2.py, single_partition_of_fp32_groups[i].grad).
    const ModelState resident = state_of(plan.precision, false);
    constexpr std::int64_t kFp32 = 4;
    const std::int64_t dense_local = ceil_div(dense_params, shard);
    const std::int64_t expert_local = ceil_div(stage.expert_params, expert_shard);
    Bytes offloaded = resident.master + resident.optimizer;
    if (stage.state.grads < resident.grads) {
      offloaded += Bytes((dense_local + expert_local) * kFp32);
    }
    if (plan.optimizer_on_nvme()) {
      // ZeRO-Infinity (stage3.py with offload_optimizer.device nvme): the fp32 partition,
      // the optimizer states and the fp32 gradients rest on NVMe; the host holds only the
      // swap buffers, each the largest sub-group in fp32. Dense and expert parameters are
      // separate parameter groups, so separate sub-groups. NOTE: DeepSpeed closes a
      // sub-group once it reaches sub_group_size, so one may exceed it by a parameter.
      optimizer_on_nvme = offloaded;
      stage.nvme_state = offloaded;
      const std::int64_t largest_sub_group =
          std::min(plan.sub_group_size, std::max(dense_local, expert_local));
      stage.host_state = Bytes(kOptimizerSwapBuffers * largest_sub_group * kFp32);
    } else {
      stage.host_state = offloaded;
    }
  }
  if (plan.paged_optimizer) {
    // bitsandbytes keeps a 32-bit optimizer's states in fp32 whatever the parameters' dtype
    // (Optimizer2State.init_state: state1/state2 in torch.float32 unless optim_bits is 8), so
    // they are counted as fp32 states, not in the training precision; 8-bit Adam as it is.
    stage.host_state = state_of(Precision::kFp32, false).optimizer;
    stage.state.optimizer = Bytes(0);
  }
  if (lora) {  // the frozen base: parameters only, sharded where the parameters are
    if (sharded_parts(plan.strategy).params) {
      stage.frozen_weights = Bytes(ceil_div(stage.frozen_weights.count(), shard));
    }
    stage.state.params += stage.frozen_weights;
  }
  if (params_offloaded) {
    // The parameter shard leaves the device: in host memory, or on NVMe with DeepSpeed's
    // pinned parameter swap buffers in host memory.
    if (plan.offload_params == OffloadParams::kNvme) {
      stage.nvme_state += stage.state.params;
      stage.host_state +=
          Bytes(kParamSwapBuffers * kParamSwapBufferElements * compute_element_bytes(plan.precision));
    } else {
      stage.host_state += stage.state.params;
    }
    stage.state.params = Bytes(0);
  }
  // DeepSpeed ZeRO-3's persistent parameters (deepspeed_zero3_gather.hpp): their partitions are
  // in the sharded state above (on the host with offload_param), and their whole 16-bit tensors
  // stay on every device besides, all-gathered again after each optimizer step (stage3.py,
  // _post_step). Their gradients and optimizer states are sharded as any other's.
  std::int64_t persistent = 0;
  for (const std::vector<BlockCosts>& chunk : stage.chunks) {
    for (const BlockCosts& c : chunk) persistent += c.persistent_params;
  }
  if (persistent > 0) {
    const Bytes whole(persistent * compute_element_bytes(plan.precision));
    stage.state.params += whole;
    stage.param_gather +=
        collectives.dp(comm::Collective::kAllGather, whole, plan.grad_group());
  }
  // PyTorch DDP's Reducer copies each gradient into its bucket; Megatron-LM's DDP reduces its
  // contiguous main_grad buffer in place (param_and_grad_buffer.py): no second copy.
  if (plan.strategy == Strategy::kDdp && plan.grad_group() > 1 &&
      plan.framework_in_use() == Framework::kPytorch) {
    for (Bytes left = stage.state.grads; left > Bytes(0); left = left - plan.ddp_bucket) {
      stage.ddp_buckets.push_back(min(left, plan.ddp_bucket));
    }
  }
  if (plan.framework_in_use() == Framework::kDeepspeed) {
    plan_deepspeed_buffers(stage, plan, per, dense_params);
  }
  const std::int64_t local =
      sharded_parts(plan.strategy).optimizer
          ? ceil_div(dense_params, shard) + ceil_div(stage.expert_params, expert_shard)
          : stage.trainable_params;
  if (plan.optimizer_impl == OptimizerImpl::kForeach) {
    // _multi_tensor_adam (torch/optim/adam.py, which AdamW runs) takes every parameter of a
    // dtype at once, and _foreach_sqrt(exp_avg_sq) allocates a new tensor for each, alive until
    // the addcdiv_ into the parameters: one state's bytes over the local parameters.
    stage.optimizer_transient = Bytes(local * (per.optimizer / 2));
  }
  if (plan.offload_optimizer) {
    const comm::LinkModel pcie = comm::host_link(dev);
    // With the parameters offloaded the gradients went down block by block (reduce_scatter
    // above) and the updated parameters stay on the host: nothing crosses at the step; on
    // NVMe the updated shard is written back.
    stage.offload_pcie = params_offloaded
                             ? Duration::zero()
                             : Bytes(local * (per.grads + per.params)) / pcie.bandwidth;
    Bytes nvme_traffic;
    if (plan.offload_params == OffloadParams::kNvme) nvme_traffic += Bytes(local * per.params);
    // ZeRO-Infinity's optimizer on NVMe: the fp32 gradients written once a step, then per
    // sub-group the fp32 partition, states and gradients read and the partition and states
    // written back (PartitionedOptimizerSwapper; pipeline_read / pipeline_write, off by
    // default, would overlap them with CPU Adam). Per byte at rest: read once, written once.
    if (plan.optimizer_on_nvme()) nvme_traffic += 2 * optimizer_on_nvme;
    if (nvme_traffic > Bytes(0)) stage.offload_nvme = nvme_traffic / nvme;
    stage.offload_cpu =
        Duration::from_seconds(static_cast<double>(local) / plan.cpu_adam_params_per_second);
    stage.offload = stage.offload_pcie + stage.offload_cpu + stage.offload_nvme;
  } else {
    const Bytes moved(local * optimizer_step_bytes_per_param(plan, per));
    const cost::TimeEstimate step = cm.memory_bound(moved);
    stage.cost_basis.add(step.basis);
    stage.optimizer = step.time;
  }
  if (plan.strategy == Strategy::kZero1 || plan.strategy == Strategy::kZero2) {
    stage.param_gather =
        collectives.dp(comm::Collective::kAllGather, Bytes(dense_params * per.params),
                       plan.grad_group()) +
        collectives.expert_dp(comm::Collective::kAllGather,
                              Bytes(stage.expert_params * per.params),
                              plan.expert_grad_group());
  }
}

}  // namespace vramsim::training
