// The training simulator's own speed (`vramsim bench train`):
//   (a) one step of a 70B model (meta-llama/Llama-3.1-70B from the zoo) on 64 H100 SXM, TP 8,
//       PP 8, 1F1B, 32 micro-batches of one 4096-token sequence, timelines recorded;
//   (b) a sweep of 1,000 plans of one model (Llama-3.1-8B on 8 to 64 H100s: strategies x TP x PP
//       x micro-batch x checkpointing), timelines off, as --find-max-micro-batch runs them;
//   (c) `vramsim bench plan-train`: the plan search of `vramsim plan train` over 10,976 plans
//       (Llama-3.1-8B on 64 H100 SXM at a global batch of 256 x 4096 tokens, the default space
//       with micro-batches 1 to 64), on `jobs` threads.
#pragma once

#include <cstdint>
#include <filesystem>

namespace vramsim::run {

struct TrainBenchResult {
  double step_wall_s = 0.0;        // (a): wall time of one simulate_training call
  std::uint64_t step_num_ops = 0;  // (a): ops in its graph (2 steps)
  std::uint64_t step_num_events = 0;
  double step_simulated_s = 0.0;  // (a): the simulated step time (a checksum)
  double sweep_wall_s = 0.0;      // (b)
  std::int64_t sweep_num_plans = 0;
  std::int64_t sweep_num_fit = 0;  // (b): plans that fit (a checksum)
};

/// Runs (a) and (b). `root` is the source tree holding scenarios/models and topologies/.
/// Throws ConfigError if the zoo or the device sheet is missing.
TrainBenchResult run_train_bench(const std::filesystem::path& root, std::int64_t num_plans = 1000);

struct PlanTrainBenchResult {
  double wall_s = 0.0;
  int jobs = 0;
  std::int64_t num_plans = 0;  // in the product
  std::int64_t num_simulated = 0;
  std::int64_t num_fit = 0;            // a checksum
  double fastest_step_time_s = 0.0;    // a checksum
};

/// Runs (c). `num_micro_batch_values` (1..7) trims the micro-batches searched (1, 2, 4, ...),
/// for a quicker check. Throws ConfigError if the zoo or the device sheet is missing.
PlanTrainBenchResult run_plan_train_bench(int jobs, int num_micro_batch_values = 7);

}  // namespace vramsim::run
