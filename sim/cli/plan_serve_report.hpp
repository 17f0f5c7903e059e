// `vramsim plan serve`'s table for people: the search and its counts, the cheapest
// configurations meeting the SLOs, the Pareto front of cost per hour against p99 E2E latency,
// the capacity and what binds for each reported one, and the answer in one line. The search is
// the run layer's (sim/run/plan_serve_run.hpp), its JSON and results file
// sim/run/plan_serve_results.hpp.
#pragma once

#include <string>

#include "sim/run/plan_serve_run.hpp"

namespace vramsim::cli {

std::string plan_serve_table(const run::PlanServeAnswer& a);

}  // namespace vramsim::cli
