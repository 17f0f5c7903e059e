// The JSON of `vramsim capacity serve|train --format json` and the results files of
// `vramsim capacity serve|train --out` (analysis/SCHEMA.md, sections
// "vramsim capacity serve --out" and "vramsim capacity train --out"): the run metadata, the
// answer as attributes of /capacity, and a table with every simulation the search ran, so that
// a reader can check the answer against each probe's outcome.
#pragma once

#include <nlohmann/json.hpp>

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

/// `capacity serve --format json`: mode "serve", the model, GPU and workload, the SLOs, the
/// largest rate meeting them and its bracket, the run counts, the note, the bisection's runs,
/// and, when searched, the best max_num_seqs and its runs.
nlohmann::ordered_json capacity_serve_json(const CapacityServeAnswer& a);

/// `capacity train --format json`: mode "train", the model, GPU and plan, one row per policy
/// ("plans") and the simulations run in all.
nlohmann::ordered_json capacity_train_json(const training::TrainingSetup& setup,
                                           const std::vector<TrainCapacityRow>& rows);

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
