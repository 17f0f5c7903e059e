#include "sim/cli/sweep_train.hpp"

#include "sim/cli/train_config.hpp"

namespace vramsim::cli {

training::TrainingSetup resolve_training_point(const io::TrainingScenario& sc) {
  io::TrainingScenario copy = sc;
  return resolve_train(TrainFlags{}, copy);  // no flag given: the scenario decides
}

}  // namespace vramsim::cli
