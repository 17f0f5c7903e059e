// The results files of `vramsim capacity serve|train --out` (analysis/SCHEMA.md, sections
// "vramsim capacity serve --out" and "vramsim capacity train --out"): the run metadata, the
// answer as attributes of /capacity, and a table with every simulation the search ran, so that
// a reader can check the answer against each probe's outcome.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/run/capacity_serve_run.hpp"
#include "sim/run/train_options.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// /capacity (mode "serve", the SLOs and the answer) and /capacity/probes. Calls w.finish().
void write_capacity_serve(io::ResultsWriter& w, const CapacityServeAnswer& a,
                          const std::string& command_line);

/// /capacity (mode "train", the plan), /capacity/policies and /capacity/probes. Calls
/// w.finish().
void write_capacity_train(io::ResultsWriter& w, const training::TrainingSetup& setup,
                          const std::vector<TrainCapacityRow>& rows,
                          std::span<const TrainProbe> probes, const std::string& command_line,
                          const TrainOptions& options);

}  // namespace vramsim::run
