// The run layer of `vramsim compare train`: one GPU (when it fits) against N GPUs under DDP,
// ZeRO-1/2, FSDP, tensor parallelism, context parallelism (ring) and, for a mixture-of-experts
// model, DDP with expert parallelism over the N GPUs, every option at the same micro-batch and
// the same global batch (sequences per optimizer step), so that step times, tokens/s and memory compare
// the same work: a data-parallel option splits the step's micro-batches over its ranks, one GPU
// and tensor parallelism accumulate them all. The global batch is the user's plan's, rounded up
// to a multiple of micro-batch x N when it is not one (every option can then run it; the answer
// says so). A verdict follows from the numbers.
#pragma once

#include <cstdint>
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
  std::string name;  // "1 GPU", "DDP x2", "ZeRO-1 x2", "ZeRO-2 x2", "FSDP full x2", "TP=2",
                     // "CP=2", "DDP x2 + EP=2" (MoE)
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
  std::int64_t global_batch = 0;     // sequences per step, the same for every option
  /// Set when the user's global batch was rounded up to one every option can run.
  std::string batch_note;
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
