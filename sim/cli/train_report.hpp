// Rendering of a training simulation: a table for people, JSON for scripts, HDF5 for analysis
// (layout in analysis/SCHEMA.md, section "vramsim train").
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

/// One row of the --find-max-micro-batch sweep.
struct MaxMicroBatch {
  std::string checkpointing;
  std::int64_t micro_batch = 0;     // 0: not even a micro-batch of 1 fits
  training::TrainingResult result;  // at that micro-batch (empty devices when 0)
};

nlohmann::ordered_json train_json(const training::TrainingSetup& setup,
                                  const training::TrainingResult& r);
std::string train_table(const training::TrainingSetup& setup, const training::TrainingResult& r);

nlohmann::ordered_json sweep_json(const training::TrainingSetup& setup,
                                  const std::vector<MaxMicroBatch>& rows);
std::string sweep_table(const training::TrainingSetup& setup,
                        const std::vector<MaxMicroBatch>& rows);

void write_train_results(const training::TrainingSetup& setup, const training::TrainingResult& r,
                         const std::filesystem::path& out, const std::string& command_line,
                         const std::string& scenario_text);

}  // namespace vramsim::cli
