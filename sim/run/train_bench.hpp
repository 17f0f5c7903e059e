// The training simulator's own speed (`vramsim bench train`):
//   (a) one step of a 70B model (meta-llama/Llama-3.1-70B from the zoo) on 64 H100 SXM, TP 8,
//       PP 8, 1F1B, 32 micro-batches of one 4096-token sequence, timelines recorded;
//   (b) a sweep of 1,000 plans of one model (Llama-3.1-8B on 8 to 64 H100s: strategies x TP x PP
//       x micro-batch x checkpointing), timelines off, as --find-max-micro-batch runs them.
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

}  // namespace vramsim::run
