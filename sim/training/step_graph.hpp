// Builds the op graph (op_graph.hpp) of a training plan: per-block costs from a roofline and the
// collective models, memory from model_state.hpp and activation_memory.hpp, the order from
// pipeline_schedule.hpp, and the data-parallel behaviour of each strategy:
//
//   strategy                 params in fwd/bwd                 gradients
//   ddp, fsdp-no-shard,      resident                          bucketed all-reduce (25 MB) on
//   zero1                                                      the last micro-batch (no_sync)
//   zero2                    resident                          reduce-scatter per block, per
//                                                              micro-batch (DeepSpeed IPG bucket)
//   zero3, fsdp-full, hsdp   all-gather per block in forward   reduce-scatter per block, per
//                            and again in backward (reshard    micro-batch; HSDP adds the
//                            after forward), one block ahead   replica all-reduce across nodes
//   fsdp-grad-op             gathered once per step (first     as zero3
//                            forward), freed after the last
//                            backward
//   zero1, zero2: all-gather of the updated parameters after the optimizer step.
//   ddp (dp > 1): PyTorch's Reducer keeps its own bucket buffers, as large as the gradients, for
//   the life of the model: the default gradient_as_bucket_view=False copies each .grad into its
//   bucket (torch.nn.parallel.DistributedDataParallel docs: setting it True "saves memory equal
//   to the total gradients size"). Megatron-LM's DDP, NO_SHARD and ZeRO need no second copy.
//
// Costs, all through the one cost model (sim/cost/cost_model.hpp: the datasheet roofline, or a
// calibration profile's tables where they cover the shape). A block's forward takes
//   one GEMM per matmul weight, m = the micro-batch's tokens (s b), n and k the weight's shape on
//     this TP rank (routed experts: each expert a GEMM of s b top_k / E tokens)
//   + the attention core: flash (prefill attention of b sequences of s tokens, causal FLOPs) or
//     eager (Q K^T and P V as GEMMs over the full s x s scores of each head, plus the softmax
//     and dropout bytes over them)
//   + the memory-bound kernels (norms, rotary where the model has it, activation, residual adds
//     or Megatron's fused bias-dropout-add) by bytes moved, as the plan's Kernels run them;
// a block without matmuls (the embedding) reads its weights as a memory-bound op. The backward
// runs two GEMMs per weight, the input gradient (m, k, n) and the weight gradient (k, n, m), each
// by its own shape, the attention core's gradients and twice the memory-bound bytes; a forward
// again where recomputed (with its TP collectives), or under selective recompute the attention
// core only. Tensor parallelism (Megatron-LM): the forward's collectives block the compute
// stream; the backward's reductions overlap the weight-gradient GEMMs and only what outlasts
// them is exposed, plus, under sequence parallelism, the two all-gathers. Context parallelism
// (block_exchanges.cpp) adds the part of its ring transfers the attention does not hide, or
// Ulysses' all-to-alls, and expert parallelism its token all-to-alls, each on the compute
// stream after the block. Pipeline sends block the sender's compute stream, as Megatron's
// batched isend/irecv waits do.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/cluster_links.hpp"
#include "sim/training/model_state.hpp"
#include "sim/training/op_graph.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

/// cuBLAS workspace PyTorch keeps per handle: 32 MiB on Hopper and later, 4096 KiB x 2 +
/// 16 KiB x 8 before (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize).
inline constexpr Bytes kCublasWorkspaceHopper = MiB(32);
inline constexpr Bytes kCublasWorkspaceDefault = KiB(4096 * 2 + 16 * 8);

struct TrainingSetup {
  model::ModelSpec model;
  hardware::DeviceSpec device;
  TrainingPlan plan;
  ClusterLinks links;
  /// A calibration profile for `device` (train --calibration); none: the datasheet roofline.
  std::optional<calibration::CalibrationProfile> calibration = std::nullopt;
};

/// The cost model of `setup`: its device, with its calibration profile's tables if any.
cost::CostModel cost_model(const TrainingSetup& setup);

/// One block (embedding, decoder layer, or lm head + loss) for one micro-batch on one TP rank.
struct BlockCosts {
  std::int64_t layer = -1;  // decoder layer, -1 for embedding and head
  std::int64_t num_params = 0;
  /// Of those, the ones with gradients and optimizer states (LoRA: adapters and the chosen
  /// extras; otherwise num_params).
  std::int64_t trainable_params = 0;
  Bytes frozen_weights;  // LoRA: the frozen base's storage on this rank (0 without LoRA)
  /// Of the trainable ones, routed-expert parameters (their gradients are reduced and sharded
  /// over the expert group, not the cp x dp group).
  std::int64_t expert_params = 0;
  Duration forward, recompute, backward, tp_forward, tp_backward, all_gather, reduce_scatter;
  /// Context parallelism's exposed exchange (ring sends not hidden by attention, or Ulysses'
  /// all-to-alls) and expert parallelism's token all-to-alls, forward and backward.
  Duration cp_forward, cp_backward, ep_forward, ep_backward;
  Bytes stored;          // activations kept for backward
  Bytes rematerialized;  // re-created by the recompute op
  Bytes forward_transient, backward_transient;
  /// The four above as the tensors that make them up (activation_memory.hpp), each its own
  /// request to the caching allocator; terms added to a total without a tensor of their own
  /// become one more tensor (split_into_tensors). Empty: the total is one tensor.
  std::vector<Bytes> stored_tensors, rematerialized_tensors, forward_tensors, backward_tensors;
  Bytes gathered;    // the unsharded parameters (ZeRO-3 / FSDP), less the persistent ones
  /// DeepSpeed ZeRO-3: of num_params, the persistent ones, whole on every rank and never
  /// gathered (deepspeed_zero3_gather.hpp); 0 otherwise.
  std::int64_t persistent_params = 0;
  /// DeepSpeed ZeRO-3: the block's module hooks, each prefetching up to one bucket
  /// (deepspeed_zero3_gather.hpp, module_hooks); 0 otherwise.
  std::int64_t module_hooks = 0;
  Bytes full_grads;  // the unsharded gradient before its reduction
  /// DeepSpeed ZeRO-3: the gathered parameters stay from this block's forward to its backward,
  /// which needs no second all-gather (stage3_max_reuse_distance; stage_plan.cpp).
  bool kept_gathered = false;
  /// bf16-amp, a recomputed block: autocast's bf16 copies of its weights, cached from its
  /// forward until the forward pass ends (a block that is not recomputed saves them for backward
  /// with its activations, in `stored`).
  Bytes autocast_cache;
};

/// What one pipeline stage (device) holds and runs.
struct StagePlan {
  std::vector<std::vector<BlockCosts>> chunks;  // per model chunk, blocks in forward order
  std::int64_t num_params = 0;                  // per TP rank, every chunk
  std::int64_t trainable_params = 0;            // of those, trained (LoRA: adapters, extras)
  std::int64_t expert_params = 0;               // of those, routed experts (EP's group)
  Bytes frozen_weights;  // LoRA: the frozen base this device keeps (in state.params; 0 without)
  ModelState state;
  Bytes workspace;
  /// PyTorch DDP's gradient buckets (persistent, gradient_as_bucket_view=False): one buffer per
  /// bucket, together the size of the gradients; empty for every other strategy or dp == 1.
  std::vector<Bytes> ddp_buckets;
  /// DeepSpeed ZeRO's gradient reduction (IPG) buckets: ZeRO-3 allocates them at start-up and
  /// keeps them, ZeRO-1/2 allocate them at each backward's first gradient and free them at its
  /// end (stage3.py _setup_for_real_optimizer; stage_1_and_2.py setup_buckets and
  /// _release_ipg_buffers). 0 for every other strategy.
  Bytes ipg_buckets;
  /// What the optimizer step allocates while it runs: DeepSpeed's fp32 copy of the gradients of
  /// its largest sub-group (ZeRO-3) or parameter group (ZeRO-1/2) beside the flattened copy it
  /// is converted from; without ZeRO, the fp32 copies and their flattened tensor. 0 elsewhere.
  Bytes optimizer_transient;
  Bytes activation_message;  // one pipeline send (activations or their gradients)
  Duration send;
  Duration optimizer;     // on the device (0 with offload)
  Duration offload;       // PCIe and CPU time of the offloaded step: the two below
  Duration offload_pcie;  // gradients down, updated parameters up over the host link
  Duration offload_cpu;   // CPU Adam over this device's parameters
  /// NVMe reads and writes of the step: parameters on NVMe, the updated shard written back;
  /// optimizer on NVMe, its states and fp32 gradients read and written once each
  Duration offload_nvme;
  /// Model state this device keeps in host memory: with --offload-optimizer the fp32 master
  /// weights and optimizer states (and, for the sharded strategies, the fp32 gradient partition
  /// ZeRO-Offload accumulates there), or with the optimizer on NVMe only DeepSpeed's swap
  /// buffers; with --offload-params cpu the parameter shard, with nvme its swap buffers; with a
  /// paged optimizer its states. 0 otherwise.
  Bytes host_state;
  /// What this device keeps on NVMe: the parameter shard with --offload-params nvme, the fp32
  /// partition, optimizer states and fp32 gradients with --offload-optimizer-device nvme.
  Bytes nvme_state;
  /// After the step: ZeRO-1/2's all-gather of the updated parameters, DeepSpeed ZeRO-3's of its
  /// persistent parameters.
  Duration param_gather;
  cost::BasisCounts cost_basis;  // where this stage's compute costs came from
};

/// The per-stage plans of `setup` (index = pipeline stage).
std::vector<StagePlan> plan_stages(const TrainingSetup& setup);

/// The op graph of `num_steps` consecutive steps (>= 1).
OpGraph build_step_graph(const TrainingSetup& setup, const std::vector<StagePlan>& stages,
                         int num_steps);

/// The model FLOPs of one step that MFU divides by (PaLM, Chowdhery et al. 2022, arXiv:2204.02311,
/// appendix B): per token 6N + 12 L H Q T, with N the parameters a token multiplies by (MoE: the
/// active ones; embedding lookups excluded, the lm_head included) and T the sequence length (or
/// a layer's sliding window). Attention counts the full square, as PaLM and Megatron-LM do, not
/// the causal half the simulation times; recomputation is not model FLOPs.
Flops model_flops_per_step(const TrainingSetup& setup);

}  // namespace vramsim::training
