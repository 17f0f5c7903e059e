// The run layer of `vramsim capacity serve`: the largest sustainable arrival rate that meets the
// SLOs (p99 TTFT, p99 TPOT, p99 E2E), by bisection over the rate with the workload's shape kept
// (a trace's arrivals rescaled in time, or a synthetic workload's rate), and optionally the
// max_num_seqs that maximises goodput at that rate. Every simulation is recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::run {

/// The search: a resolved serving configuration (its rate is where the search starts), the
/// objectives and when to stop.
struct CapacitySearch {
  ServeConfig base;
  std::optional<Duration> ttft_p99, tpot_p99, e2e_p99;  // at least one
  double precision = 0.02;  // stop when (high - low) / high <= precision, in (0, 1)
  int max_runs = 30;        // bisection simulations at most, >= 2
  bool search_max_num_seqs = false;
};

/// One simulation of the search and how it measured against the objectives.
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
  /// The first bisection run, prepared and simulated: its resolved inputs describe the workload
  /// at its own shape (the results file stores them).
  ServeAnswer first_run;
  std::string scenario_text;
  std::uint64_t seed = 0;
  std::string cost_model;  // the step-time model's description
  /// Every simulation the search ran (trace probe, bisection, max_num_seqs search).
  std::size_t num_simulations() const {
    return (trace_probe ? 1 : 0) + runs.size() + seq_runs.size();
  }
};

/// Runs the search. Throws ConfigError for bad input: the search's own settings under
/// "capacity.precision", "capacity.max_runs", "capacity.slo" (no objective) or
/// "capacity.slo_ttft_p99" / "capacity.slo_tpot_p99" / "capacity.slo_e2e_p99" (not positive);
/// the base configuration's problems as run::prepare_serve reports them; an infeasible
/// configuration under "model.id" naming why, a trace whose arrivals span no time under
/// "workload.trace".
CapacityServeAnswer capacity_serve(const CapacitySearch& search);

}  // namespace vramsim::run
