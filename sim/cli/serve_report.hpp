// `vramsim serve`'s answer as a table for people. The JSON and HDF5 records are the run layer's
// (sim/run/serve_results.hpp).
#pragma once

#include <string>

#include "sim/cli/budget_report.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::cli {

using run::ServeAnswer;
using run::ServeConfig;
using run::simulate_serve;

/// The run's summary, latencies and KV use as a table.
std::string serve_table(const ServeAnswer& a);

}  // namespace vramsim::cli
