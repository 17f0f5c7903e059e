// `vramsim compare train`: its flags, resolved into a run::CompareTrain (the comparison itself is
// sim/run/compare_train_run, its JSON and results file sim/run/compare_results), and the
// answer as a table.
#pragma once

#include <optional>
#include <string>

#include "sim/cli/train_config.hpp"
#include "sim/run/compare_train_run.hpp"

namespace vramsim::cli {

struct CompareTrainFlags {
  TrainFlags train;
  int num_gpus = 2;
  std::optional<double> price_per_gpu_hour;
};

using run::CompareTrainAnswer;
using run::TrainOption;

/// The scenario (if any) read, the flags merged over it, and run::compare_train run; problems,
/// and the reasons of the plans not possible, named by their flags.
CompareTrainAnswer compare_train(const CompareTrainFlags& f);
std::string compare_train_table(const CompareTrainAnswer& a);

}  // namespace vramsim::cli
