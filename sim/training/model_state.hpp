// Model-state bytes per device: working parameters, gradients, fp32 master weights and optimizer
// states, for a sharding strategy, precision policy and optimizer.
//
// Bytes per parameter before sharding (ZeRO paper, Rajbhandari et al. 2020, arXiv:1910.02054,
// sec. 3.1: "2Ψ + 2Ψ + KΨ" with K = 12 for mixed-precision Adam):
//
//   precision    params  grads  master  Adam/AdamW  SGD(momentum)  8-bit Adam
//   bf16-mixed     2       2      4        8             4             2
//   fp16-mixed     2       2      4        8             4             2
//   bf16           2       2      0        4             2             2
//   fp32           4       4      0        8             4             2
//   bf16-amp       4       4      0        8             4             2
//
// Optimizer states follow the dtype of the weights they update: fp32 masters for mixed precision,
// the parameters themselves otherwise. bf16-amp (PyTorch autocast over an fp32 model) keeps the
// fp32 parameters as they are; its bf16 weight copies live in the step (block_memory.cpp): with
// them, Hugging Face's "18 bytes per model parameter" of mixed precision AdamW
// (transformers docs/source/en/model_memory_anatomy.md: 6 + 8 + 4). 8-bit Adam (Dettmers et al. 2022, arXiv:2110.02861) keeps
// two 1-byte states; its per-block fp32 absmax (one per 2048 values) adds 0.4%, ignored here.
//
// Sharding over the `shard_degree` ranks of a DP group (N_d):
//   ddp, fsdp-no-shard       nothing sharded                       16Ψ     (mixed Adam)
//   zero1                    master + optimizer states sharded     4Ψ + 12Ψ/N_d
//   zero2                    + gradients                           2Ψ + 14Ψ/N_d
//   zero3, fsdp-full, hsdp   + parameters                          16Ψ/N_d
//   fsdp-grad-op             as zero3 at rest (parameters are gathered from forward to backward;
//                            the step simulation holds those as temporaries)
// A sharded tensor of n elements keeps ceil(n / N_d) elements per rank (flat-parameter padding).
// With --offload-optimizer the master weights and optimizer states live in host memory, and so
// do the gradient partitions of the sharded strategies (ZeRO-Offload); the device keeps the
// working parameters: 2Ψ for ZeRO-1/2, 2Ψ/N_d for ZeRO-3, as DeepSpeed's estimators say.
#pragma once

#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

struct BytesPerParam {
  std::int64_t params = 0;
  std::int64_t grads = 0;
  std::int64_t master = 0;
  std::int64_t optimizer = 0;
  std::int64_t total() const { return params + grads + master + optimizer; }
};

/// The table above, one row and column.
BytesPerParam bytes_per_param(Precision p, Optimizer o);

struct ModelState {
  Bytes params;
  Bytes grads;
  Bytes master;
  Bytes optimizer;
  Bytes total() const { return params + grads + master + optimizer; }
  ModelState& operator+=(const ModelState& o) {
    params = params + o.params;
    grads = grads + o.grads;
    master = master + o.master;
    optimizer = optimizer + o.optimizer;
    return *this;
  }
};

/// Whether each part of the model state is sharded under `s` (see the table above).
struct ShardedParts {
  bool params = false;
  bool grads = false;
  bool optimizer = false;  // master weights and optimizer states together
};
ShardedParts sharded_parts(Strategy s);

/// Device-resident model state of `num_params` parameters (one device's TP/PP slice) sharded
/// over `shard_degree` ranks. `offload_optimizer` moves master and optimizer states, and the
/// gradients of the sharded strategies, to the host (they count 0 here).
/// `grad_bytes` > 0 replaces the precision's gradient element bytes (Megatron-LM's fp32
/// main_grad buffers: TrainingPlan::grad_element_bytes).
ModelState model_state_bytes(std::int64_t num_params, Strategy s, Precision p, Optimizer o,
                             int shard_degree, bool offload_optimizer = false,
                             std::int64_t grad_bytes = 0);

}  // namespace vramsim::training
