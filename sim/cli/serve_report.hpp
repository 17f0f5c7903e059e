// `vramsim serve`'s answer: the run's summary as JSON (the DESIGN.md field names) and as a table,
// and the HDF5 results file (analysis/SCHEMA.md, "vramsim serve").
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "sim/cli/budget_report.hpp"
#include "sim/run/serve_run.hpp"
#include "sim/serving/serving_simulation.hpp"

#include "sim/io/typed_columns.hpp"

namespace vramsim::cli {

using run::ServeAnswer;
using run::ServeConfig;
using run::simulate_serve;

/// The run's summary as typed fields (analysis/SCHEMA.md, "/serve/summary"): the one
/// declaration of each field's name, quantity and value, which serve_json, the table of
/// `/serve/summary` and sweep's summary columns render. Every field is always present.
io::TypedRecord serve_summary(const ServeAnswer& a);
/// The names and quantities of serve_summary's fields, in order (they do not depend on the
/// answer).
const io::FieldSchema& serve_summary_schema();

/// serve_summary as JSON, then "inputs" (the resolved configuration).
nlohmann::ordered_json serve_json(const ServeAnswer& a);
std::string serve_table(const ServeAnswer& a);

/// Streams per-request rows and time-series samples into an open results file.
std::unique_ptr<serving::ServingObserver> make_results_observer(io::ResultsWriter& w);

/// Writes /serve/summary (one row) and the run's attributes.
void write_serve_summary(io::ResultsWriter& w, const ServeAnswer& a);

}  // namespace vramsim::cli
