// The run layer of `vramsim compare train`: one GPU (when it fits) against N GPUs under DDP,
// ZeRO-1/2, FSDP and tensor parallelism, at the same micro-batch and micro-batches per step per
// data-parallel rank (weak scaling: each data-parallel rank keeps its batch, so tokens/s measure
// the speed-up), and a verdict that follows from the numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/run/train_options.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

struct CompareTrain {
  /// The user's settings: their micro-batch, sequence length, precision, optimizer and
  /// checkpointing are kept; the parallel plan is what the options vary.
  TrainOptions options;
  int num_gpus = 2;  // compare.num_gpus: N, in [2, 4096]
  std::optional<double> price_per_gpu_hour;  // compare.price_per_gpu_hour: USD, > 0
};

/// One plan tried.
struct TrainOption {
  std::string name;  // "1 GPU", "DDP x2", "ZeRO-1 x2", "ZeRO-2 x2", "FSDP full x2", "TP=2"
  int num_gpus = 1;
  bool valid = false;  // the plan is possible for this model (else `problem` and `reason`)
  /// The plan's first problem, on its config path ("parallel.tp"), when not valid.
  Problem problem;
  std::string reason;  // "<field>: <message>" of `problem`
  training::TrainingSetup setup;
  training::TrainingResult result;  // when valid
  double speedup = 0.0;             // tokens/s against the one-GPU option (0: undefined)
  double scaling_efficiency = 0.0;  // speedup / num_gpus
};

struct CompareTrainAnswer {
  std::vector<TrainOption> options;  // [0] is one GPU
  std::string verdict;
  std::optional<double> price_per_gpu_hour;
};

/// Resolves the options (run::resolve_training) and simulates two steps of every plan. A plan the
/// model does not allow is an option with its problem. Throws ConfigError for bad input: the
/// comparison's own settings under "compare.num_gpus" and "compare.price_per_gpu_hour" (checked
/// first), then the options' problems as resolve_training reports them.
CompareTrainAnswer compare_train(const CompareTrain& q);

/// The fullest device's peak allocated bytes; its peak reserved bytes plus the memory outside
/// the allocator (CUDA context, NCCL buffers). Zero when `r` has no device.
Bytes peak_allocated(const training::TrainingResult& r);
Bytes peak_reserved(const training::TrainingResult& r);

}  // namespace vramsim::run
