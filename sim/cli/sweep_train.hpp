// A training scenario resolved into a simulation setup, for `vramsim sweep` train points: the
// scenario values, else `vramsim train`'s defaults.
// NOTE: this mirrors the flag-free part of train_command.cpp's resolve(), which is private to
// that file. TODO(sweep): call a public resolve from train_command.cpp once it exposes one, so
// that the two cannot drift apart.
#pragma once

#include "sim/io/training_scenario.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

/// Resolves and validates `sc` (plan and model). Throws ConfigError with every problem at the
/// scenario field's file:line.
training::TrainingSetup resolve_training_point(const io::TrainingScenario& sc);

}  // namespace vramsim::cli
