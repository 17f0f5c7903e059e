// The searches over training plans (`train --find-max-micro-batch`, `capacity train`): one
// record per simulated step (a probe), and their results files (analysis/SCHEMA.md, sections
// "vramsim train --find-max-micro-batch --out" and "vramsim capacity train --out").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cli/train_report.hpp"
#include "sim/core/units.hpp"
#include "sim/io/results_file.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

/// Which search ran a probe.
enum class TrainSearch {
  kMicroBatch,  // the largest micro-batch at the plan's seq_len (doubling, then bisection)
  kSeqLen,      // the longest sequence at micro-batch 1
};

std::string_view to_string(TrainSearch s);

/// One simulated step of a search: the plan's knobs and what came out (the binding device's
/// numbers; zeros when the result has no device).
struct TrainProbe {
  std::string checkpointing;
  TrainSearch search = TrainSearch::kMicroBatch;
  std::int64_t micro_batch = 0;
  std::int64_t seq_len = 0;
  bool fits = false;
  std::int64_t binding_stage = 0;
  Bytes peak_allocated, peak_reserved, non_allocator, capacity;
  Duration step_time;
  double tokens_per_s = 0.0;
};

/// The device closest to running out: the highest peak reserved + non-allocator memory
/// (nullptr when `r` has no device).
const training::DeviceResult* binding_device(const training::TrainingResult& r);

TrainProbe make_train_probe(std::string checkpointing, TrainSearch search,
                            const training::TrainingPlan& plan, const training::TrainingResult& r);

/// Writes `probes` as the table `group` (SCHEMA.md: the probe table of the training searches).
void write_train_probes(io::ResultsWriter& w, std::string_view group,
                        std::span<const TrainProbe> probes);

/// The run metadata of a training search file (created_by names the command).
void write_train_search_metadata(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                 const std::string& command_line, const std::string& scenario_text,
                                 std::string_view created_by);

/// Sets the plan's attributes (model, gpu, num_gpus, strategy, tp, pp, seq_len, ...) on `group`.
void write_train_plan_attributes(io::ResultsWriter& w, std::string_view group,
                                 const training::TrainingSetup& setup);

/// `train --find-max-micro-batch --out`: the metadata, /max_micro_batch/policies (one row per
/// policy with its TrainingResult summary) and /max_micro_batch/probes. Calls w.finish().
void write_max_micro_batch_results(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                   const std::vector<MaxMicroBatch>& rows,
                                   std::span<const TrainProbe> probes,
                                   const std::string& command_line,
                                   const std::string& scenario_text);

}  // namespace vramsim::cli
