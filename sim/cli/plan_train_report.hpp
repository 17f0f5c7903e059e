// `vramsim plan train`'s table for people: the search and its counts, the fastest plans that
// fit, the Pareto front of step time against memory headroom, and the answer in one line. The
// search is the run layer's (sim/run/plan_train_run.hpp), its JSON and results file
// sim/run/plan_train_results.hpp.
#pragma once

#include <string>

#include "sim/run/plan_train_run.hpp"

namespace vramsim::cli {

std::string plan_train_table(const run::PlanTrainAnswer& a);

}  // namespace vramsim::cli
