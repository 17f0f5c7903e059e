// DeepSpeed ZeRO-3's parameter persistence and prefetch, at the simulator's block granularity
// (embedding, decoder layers, final norm + head), from deepspeed/runtime/zero at
// deepspeedai/DeepSpeed edaa722:
//
// - Persistence (parameter_offload.py, mark_persistent_parameters; partition_parameters.py,
//   ds_persist): walking model.named_parameters() in module order, a tensor of at most
//   stage3_param_persistence_threshold elements is persistent unless it would take the
//   persistent total past stage3_model_persistence_threshold (then it is skipped and the walk
//   goes on). A persistent parameter is never released after use: its whole 16-bit tensor
//   stays on every rank, and it is all-gathered once per step, after the optimizer step
//   (stage3.py, _post_step). Its partition is an ordinary one, in the flat 16-bit buffer the
//   fp32 master partition and the optimizer states are taken from (stage3.py,
//   _create_fp16_partitions_with_defragmentation), so those stay sharded; its gradient takes
//   the same reduce-scatter into the rank's partition as every other (stage3.py,
//   create_reduce_and_remove_grad_hooks, __avg_scatter_grads). With offload_param the
//   partition moves to the host like the others; the whole tensor stays on the device.
// - Prefetch (partitioned_param_coordinator.py, fetch_sub_module): when a module is about to
//   run, its parameters not yet gathered are gathered and waited for (exposed); then up to
//   min(stage3_prefetch_bucket_size, stage3_max_live_parameters - gathered elements alive)
//   elements of the next parameters in the trace are all-gathered ahead, on the all-gather
//   stream, overlapping the module's compute. Persistent parameters are never gathered and
//   count in neither. max_live_parameters bounds only the prefetch: the running module's own
//   parameters are gathered whatever it says.
//
// DeepSpeed runs that step at every module's pre-forward (and pre-backward) hook, each adding up
// to one bucket of parameters not yet gathered, so its window runs ahead of the module in use
// by up to one bucket per hook until max_live_parameters stops it. At the simulator's block
// granularity a block's prefetch is one bucket per module hook it holds (module_hooks: one per
// parameter tensor; its containers and parameterless modules, which also prefetch, are not
// counted, so the window is if anything short), issued as the block starts.
// NOTE: a block's parameters are taken as divisible (DeepSpeed prefetches whole tensors,
// overshooting the bucket by at most one), and the prefetch does not cross from one pass (the
// forward or the backward of a micro-batch) into the next.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/model/model_spec.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

/// Elements (on one TP rank) of DeepSpeed ZeRO-3's persistent parameters, per block.
struct PersistentParams {
  std::int64_t embedding = 0;           // the embedding block (kPreLayers tensors)
  std::vector<std::int64_t> per_layer;  // each decoder layer (size num_layers)
  std::int64_t head = 0;                // the final norm and the head
  std::int64_t num_tensors = 0;         // persistent tensors (TP-local copies counted once)
  std::int64_t total() const;
};

/// The persistent parameters of `spec` under `plan`'s thresholds; all zero unless the plan is
/// DeepSpeed's zero3. A tensor's elements are those of one TP rank (replicated tensors whole,
/// split ones divided by tp). NOTE: with LoRA nothing is made persistent (its adapters, which
/// DeepSpeed would persist below the threshold, are not modelled here).
PersistentParams persistent_params(const model::ModelSpec& spec, const TrainingPlan& plan);

/// DeepSpeed ZeRO-3's module hooks per block (see the file comment): the parameter tensors
/// (each copy of an expert's) of the embedding block, of each decoder layer, and of the final
/// norm and head. Persistent tensors count: their modules' hooks prefetch too.
struct ModuleHooks {
  std::int64_t embedding = 0;
  std::vector<std::int64_t> per_layer;  // size num_layers
  std::int64_t head = 0;
};
/// The module hooks of `spec` when `plan` runs ZeRO-3 (the step graph's prefetch reads them only
/// then, step_graph_forward.cpp and step_graph_backward.cpp); all zero otherwise, without
/// walking the model's tensors.
ModuleHooks module_hooks(const model::ModelSpec& spec, const TrainingPlan& plan);

/// Part of one block's all-gather in a pass: `elements` of the block at pass position `block`,
/// issued when the block at position `issued_at` is fetched (== block: on demand, exposed).
struct GatherPiece {
  std::size_t block = 0;
  std::size_t issued_at = 0;
  std::int64_t elements = 0;
  friend bool operator==(const GatherPiece&, const GatherPiece&) = default;
};

/// The all-gathers of one pass over blocks in the order it runs them: `need[k]`, elements the
/// block at position k must gather (0: none, e.g. kept gathered since its forward); `held[k]`,
/// gathered elements other blocks hold while position k runs (kept for their backward), which
/// count against `max_live`; `hooks[k]`, the module hooks of the block at position k (empty:
/// one each). At each position, the block's rest on demand, then a prefetch of up to
/// min(hooks x bucket, max_live - alive) elements of the following blocks. Pieces come in the
/// order they are issued.
std::vector<GatherPiece> plan_gathers(std::span<const std::int64_t> need,
                                      std::span<const std::int64_t> held, std::int64_t bucket,
                                      std::int64_t max_live,
                                      std::span<const std::int64_t> hooks = {});

}  // namespace vramsim::training
