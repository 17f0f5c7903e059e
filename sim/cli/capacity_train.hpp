// `vramsim capacity train`: the searches are the run layer's (run::capacity_train), their JSON
// and results file sim/run/capacity_results; here the answer is a table.
#pragma once

#include <string>
#include <vector>

#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

std::string capacity_train_table(const training::TrainingSetup& setup,
                                 const std::vector<run::TrainCapacityRow>& rows);

}  // namespace vramsim::cli
