// `vramsim serve`'s answer: the run's summary as JSON (the DESIGN.md field names) and as a table,
// and the HDF5 results file (analysis/SCHEMA.md, "vramsim serve").
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/serve_config.hpp"
#include "sim/serving/serving_simulation.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::cli {

struct ServeAnswer {
  ServeConfig config;
  BudgetAnswer budget;
  std::string trace_description;
  std::string cost_model;
  serving::ServingResult result;
};

nlohmann::ordered_json serve_json(const ServeAnswer& a);
std::string serve_table(const ServeAnswer& a);

/// Streams per-request rows and time-series samples into an open results file.
std::unique_ptr<serving::ServingObserver> make_results_observer(io::ResultsWriter& w);

/// Writes /serve/summary (one row) and the run's attributes.
void write_serve_summary(io::ResultsWriter& w, const ServeAnswer& a);

}  // namespace vramsim::cli
