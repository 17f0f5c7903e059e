// `vramsim serve`'s answer as records, callable without the command line: the run's summary as
// typed fields and as JSON (DESIGN.md's field names), and the HDF5 tables of the results file
// (analysis/SCHEMA.md, "vramsim serve"). The terminal table is sim/cli/serve_report.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>

#include "sim/io/typed_columns.hpp"
#include "sim/run/serve_run.hpp"
#include "sim/serving/serving_simulation.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// `n` events over `seconds` as a rate per second; 0 when no time passed.
double per_second(std::int64_t n, double seconds);

/// The run's summary as typed fields (analysis/SCHEMA.md, "/serve/summary"): the one
/// declaration of each field's name, quantity and value, which serve_json, the table of
/// `/serve/summary` and sweep's summary columns render. Every field is always present.
io::TypedRecord serve_summary(const ServeAnswer& a);
/// The names and quantities of serve_summary's fields, in order (they do not depend on the
/// answer).
const io::FieldSchema& serve_summary_schema();

/// A disaggregated run's own fields (analysis/SCHEMA.md, "/serve/disaggregated"): the pools,
/// their utilisation, the prefill instance's TTFT and the KV transfers. Needs
/// a.result.disaggregated.
io::TypedRecord disaggregated_summary(const ServeAnswer& a);
/// The KV disk tier's metrics (JSON "kv_disk", HDF5 /serve/kv_disk): per-tier prefix hit
/// rates, blocks moved per tier, disk time. Written only with the disk tier on.
io::TypedRecord kv_disk_summary(const ServeAnswer& a);

/// serve_summary as JSON, then "inputs" (the resolved configuration).
nlohmann::ordered_json serve_json(const ServeAnswer& a);

/// Streams per-request rows (/serve/requests) and time-series samples (/serve/timeseries) into
/// an open results file; `w` must outlive it.
std::unique_ptr<serving::ServingObserver> make_results_observer(io::ResultsWriter& w);

/// Writes /serve/summary (one row) and the run's attributes.
void write_serve_summary(io::ResultsWriter& w, const ServeAnswer& a);

}  // namespace vramsim::run
