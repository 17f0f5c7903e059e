// Rendering of a training simulation: a table for people, JSON for scripts, HDF5 for analysis
// (layout in analysis/SCHEMA.md, section "vramsim train").
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

using run::MaxMicroBatch;  // one row of the --find-max-micro-batch search

nlohmann::ordered_json train_json(const training::TrainingSetup& setup,
                                  const training::TrainingResult& r);
std::string train_table(const training::TrainingSetup& setup, const training::TrainingResult& r);

nlohmann::ordered_json sweep_json(const training::TrainingSetup& setup,
                                  const std::vector<MaxMicroBatch>& rows);
std::string sweep_table(const training::TrainingSetup& setup,
                        const std::vector<MaxMicroBatch>& rows);

/// The file-level `inputs` JSON holds, under "settings", every schema row's resolved value with
/// its origin (run::resolved_inputs_json); the scenario text is the options'.
void write_train_results(const training::TrainingSetup& setup, const training::TrainingResult& r,
                         const std::filesystem::path& out, const std::string& command_line,
                         const run::TrainOptions& options);

/// Where a training setup's compute costs come from: "datasheet roofline", or the calibration
/// profile's path.
std::string cost_source(const training::TrainingSetup& s);

/// The resolved plan as JSON (model, gpu, parallelism, precision, batch): the head of
/// train_json and the `inputs` of the training search files.
nlohmann::ordered_json train_plan_json(const training::TrainingSetup& s);

}  // namespace vramsim::cli
