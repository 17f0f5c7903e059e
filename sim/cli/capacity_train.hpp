// `vramsim capacity train`: for the user's parallel plan, under each checkpointing policy, the
// largest micro-batch that fits (at the plan's sequence length) and the longest sequence that
// fits (at micro-batch 1).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

// The searches are the run layer's (run::capacity_train); here they are rendered.
using run::kSeqLenStep;
using run::TrainCapacityRow;

nlohmann::ordered_json capacity_train_json(const training::TrainingSetup& setup,
                                           const std::vector<TrainCapacityRow>& rows);
std::string capacity_train_table(const training::TrainingSetup& setup,
                                 const std::vector<TrainCapacityRow>& rows);

}  // namespace vramsim::cli
