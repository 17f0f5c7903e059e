// A training scenario resolved into a simulation setup, for `vramsim sweep` train points: the
// scenario's values, else `vramsim train`'s defaults (the same resolution, train_config.hpp).
#pragma once

#include "sim/io/training_scenario.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

/// Resolves and validates `sc` (plan and model). Throws ConfigError with every problem at the
/// scenario field's file:line.
training::TrainingSetup resolve_training_point(const io::TrainingScenario& sc);

}  // namespace vramsim::cli
