// `vramsim serve`'s answer: the run's summary as JSON (the DESIGN.md field names) and as a table,
// and the HDF5 results file (analysis/SCHEMA.md, "vramsim serve").
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/serve_config.hpp"
#include "sim/serving/serving_simulation.hpp"

#include "sim/io/typed_columns.hpp"

namespace vramsim::cli {

using run::ServeAnswer;
using run::simulate_serve;


/// Resolves flags over the scenario, sizes the KV cache with the budget and validates the
/// policies. Throws ConfigError for bad input; an infeasible configuration (weights do not fit)
/// is returned with feasible == false and budget.result.reason saying why.
ServeAnswer prepare_serve(const ServeFlags& f);

/// The same from an already resolved configuration (e.g. one option of `compare`): the run
/// layer's run::prepare_serve, with its problems moved onto the user's flags (a scheduler limit
/// "engine.max_num_seqs" onto --max-num-seqs) and, through `origins`, onto scenario lines.
ServeAnswer prepare_serve(ServeConfig config, const Origins& origins);

/// A run-layer config path and the flag a user sets it with; `hint` is appended to the message.
struct FlagForPath {
  std::string_view path, flag, hint;
};

/// A run layer's problems moved onto the user's flags: a path of `paths` onto its flag, a
/// scheduler limit "engine.max_num_seqs" onto --max-num-seqs, then through `origins` onto the
/// scenario's file:line where the value came from there.
ValidationReport on_flags(const ValidationReport& problems, const Origins& origins,
                          std::span<const FlagForPath> paths = {});

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
