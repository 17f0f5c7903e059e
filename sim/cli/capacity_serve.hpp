// `vramsim capacity serve`: the largest sustainable arrival rate that meets the SLOs (p99 TTFT,
// p99 TPOT, p99 E2E), by bisection over the rate with the workload's shape kept (a trace's
// arrivals rescaled in time, or a synthetic workload's rate), and optionally the max_num_seqs
// that maximises goodput at that rate.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/cli/serve_config.hpp"
#include "sim/cli/serve_report.hpp"

namespace vramsim::cli {

struct CapacityServeFlags {
  ServeFlags serve;
  std::string slo_ttft_p99, slo_tpot_p99, slo_e2e_p99;
  double precision = 0.02;  // stop when (high - low) / high <= precision
  int max_runs = 30;
  bool search_max_num_seqs = false;
};

struct CapacityRun {
  double rate_per_s = 0.0;
  bool meets = false;
  Duration ttft_p99, tpot_p99, e2e_p99;
  double goodput_per_s = 0.0;
  std::int64_t max_num_seqs = 0;
};

struct CapacityServeAnswer {
  std::string model, gpu, workload;
  std::optional<Duration> ttft_p99, tpot_p99, e2e_p99;
  double max_rate_per_s = 0.0;     // the highest rate seen to meet the SLOs (0: none did)
  double bracket_low = 0.0;        // meets
  double bracket_high = 0.0;       // fails (0: no failing rate found below the search cap)
  /// For a trace: the simulation at the trace's own rate that measured that rate (not a step of
  /// the bisection, which then starts there).
  std::optional<CapacityRun> trace_probe;
  std::vector<CapacityRun> runs;   // the bisection, in order
  std::vector<CapacityRun> seq_runs;  // the max_num_seqs search at max_rate_per_s
  std::int64_t best_max_num_seqs = 0;
  std::string note;
  // For the results file: the workload at its own rate as resolved (serve's `inputs`), the
  // scenario file's text, the seed and the step-time model's description.
  nlohmann::ordered_json inputs;
  std::string scenario_text;
  std::uint64_t seed = 0;
  std::string cost_model;
  /// Every simulation the command ran (trace probe, bisection, max_num_seqs search).
  std::size_t num_simulations() const {
    return (trace_probe ? 1 : 0) + runs.size() + seq_runs.size();
  }
};

/// Throws ConfigError for bad input (no SLO given, an infeasible configuration names why).
CapacityServeAnswer capacity_serve(const CapacityServeFlags& f);

nlohmann::ordered_json capacity_serve_json(const CapacityServeAnswer& a);
std::string capacity_serve_table(const CapacityServeAnswer& a);

}  // namespace vramsim::cli
