// The flags of `vramsim train` and their resolution into a training setup, shared with the
// commands that run many training plans (`compare train`, `capacity train`, `sweep`).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/train_report.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

struct TrainProbe;  // train_search_output.hpp

struct TrainFlags {
  std::string scenario, model, gpu, topology, strategy, pp_schedule, checkpointing, precision,
      optimizer, out, calibration;
  std::int64_t num_gpus = 1, gpus_per_node = 8, tp = 1, pp = 1, pp_interleave = 1, micro_batch = 1,
               global_batch = 0, seq_len = 2048;
  bool sequence_parallel = false, offload_optimizer = false, find_max = false;
  OutputFormat format = OutputFormat::kTable;
  std::map<std::string, CLI::Option*> options;
  bool given(const std::string& flag) const {
    auto it = options.find(flag);
    return it != options.end() && it->second->count() > 0;
  }
};

/// Registers the scenario argument and every train flag (but --find-max-micro-batch) on `cmd`.
void add_train_flags(CLI::App& cmd, TrainFlags& f);

/// Merges flags over the scenario and validates the plan for the model. Throws ConfigError
/// naming each flag, or the scenario field with its file:line.
training::TrainingSetup resolve_train(const TrainFlags& f, io::TrainingScenario& sc);

/// The largest micro-batch that fits under `ckpt`, keeping the number of micro-batches per step
/// (doubling, then bisection; one simulated step each, no timelines). When `probes` is given,
/// every simulated step is appended to it, in order.
MaxMicroBatch find_max_micro_batch(training::TrainingSetup s, const training::Checkpointing& ckpt,
                                   std::vector<TrainProbe>* probes = nullptr);

}  // namespace vramsim::cli
