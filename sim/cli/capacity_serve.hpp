// `vramsim capacity serve`: its flags, resolved into a run::CapacitySearch (the search itself is
// sim/run/capacity_serve_run), and the answer as a table (its JSON and results file are
// sim/run/capacity_results).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/serve_flags.hpp"
#include "sim/run/capacity_serve_run.hpp"

namespace vramsim::cli {

struct CapacityServeFlags {
  ServeFlags serve;
  std::string slo_ttft_p99, slo_tpot_p99, slo_e2e_p99;
  double precision = 0.02;  // stop when (high - low) / high <= precision
  int max_runs = 30;
  bool search_max_num_seqs = false;
  bool search_max_concurrency = false;  // the client count instead of the rate
  std::int64_t max_concurrency_cap = run::CapacitySearch{}.max_concurrency_cap;
};

using run::CapacityRun;
using run::CapacityServeAnswer;

/// Throws ConfigError for bad input (no SLO given, an infeasible configuration names why).
CapacityServeAnswer capacity_serve(const CapacityServeFlags& f);

std::string capacity_serve_table(const CapacityServeAnswer& a);

}  // namespace vramsim::cli
