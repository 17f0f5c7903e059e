// A training simulation rendered as tables for people (layout of its records: the run layer's
// sim/run/train_results.hpp, and analysis/SCHEMA.md, section "vramsim train").
#pragma once

#include <string>
#include <vector>

#include "sim/run/train_results.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

/// Memory per pipeline stage at its allocated peak, step time per stage, throughput and MFU.
std::string train_table(const training::TrainingSetup& setup, const training::TrainingResult& r);

/// `train --find-max-micro-batch`: per policy, the largest micro-batch that fits.
std::string max_micro_batch_table(const training::TrainingSetup& setup,
                                  const std::vector<run::MaxMicroBatch>& rows);

/// The fixes of a plan that does not fit, those that fit first ("" when there are none).
std::string train_fixes_table(const std::vector<run::TrainFix>& fixes);

}  // namespace vramsim::cli
