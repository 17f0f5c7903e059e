// The results files of the searches over training plans (`train --find-max-micro-batch`,
// `capacity train`; the searches and their probes are sim/run/train_run.hpp): one row per
// simulated step (a probe), the plan and the answer (analysis/SCHEMA.md, sections
// "vramsim train --find-max-micro-batch --out" and "vramsim capacity train --out").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/run/train_options.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// Writes `probes` as the table `group` (SCHEMA.md: the probe table of the training searches).
void write_train_probes(io::ResultsWriter& w, std::string_view group,
                        std::span<const TrainProbe> probes);

/// The run metadata of a training search file (created_by names the command).
void write_train_search_metadata(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                 const std::string& command_line, const std::string& scenario_text,
                                 std::string_view created_by,
                                 const TrainOptions* options = nullptr);

/// Sets the plan's attributes (model, gpu, num_gpus, strategy, tp, pp, seq_len, ...) on `group`.
void write_train_plan_attributes(io::ResultsWriter& w, std::string_view group,
                                 const training::TrainingSetup& setup);

/// `train --find-max-micro-batch --out`: the metadata, /max_micro_batch/policies (one row per
/// policy with its TrainingResult summary) and /max_micro_batch/probes. Calls w.finish().
void write_max_micro_batch_results(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                   const std::vector<MaxMicroBatch>& rows,
                                   std::span<const TrainProbe> probes,
                                   const std::string& command_line,
                                   const TrainOptions& options);

}  // namespace vramsim::run
