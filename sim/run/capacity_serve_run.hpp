// The run layer of `vramsim capacity serve`: the largest sustainable arrival rate that meets the
// SLOs (p99 TTFT, p99 TPOT, p99 E2E), by bisection over the rate with the workload's shape kept
// (a trace's arrivals rescaled in time, or a synthetic workload's rate), and optionally the
// max_num_seqs that maximises goodput at that rate. Every simulation is recorded.
//
// The same search runs over a second axis, the client count (CapacityAxis::kMaxConcurrency):
// the largest number of concurrent clients, as `vllm bench serve --max-concurrency N` sets it,
// whose run meets the SLOs, found by doubling from one client and then bisecting over the
// integers, so the answer N meets and N + 1 misses (or N is the cap).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::run {

/// What the search varies.
enum class CapacityAxis : std::uint8_t {
  kRate,            // the arrival rate (requests/s), geometric bisection to `precision`
  kMaxConcurrency,  // the client gate (ServingSetup::clients.max_concurrency), integers
};
std::string_view to_string(CapacityAxis axis);

struct CapacityRun;

/// The search: a resolved serving configuration (its rate is where the search starts), the
/// objectives and when to stop.
struct CapacitySearch {
  ServeConfig base;
  std::optional<Duration> ttft_p99, tpot_p99, e2e_p99;  // at least one
  double precision = 0.02;  // kRate: stop when (high - low) / high <= precision, in (0, 1)
  int max_runs = 30;        // bisection simulations at most, >= 2
  bool search_max_num_seqs = false;
  CapacityAxis axis = CapacityAxis::kRate;
  /// kMaxConcurrency: the most clients tried, >= 1. The clients are base.setup.clients with
  /// their count replaced: a base without a client gate gets closed-loop clients (every
  /// request due at once, vLLM's default --request-rate inf); a gated base that keeps its
  /// arrivals (send_all_at_start false) has its open-loop stream capped instead.
  std::int64_t max_concurrency_cap = 4096;
  /// Called after every simulation of the search (the CLI's progress line); it cannot change
  /// the search. Empty: not called.
  std::function<void(const CapacityRun& run)> on_run = {};
};

/// One simulation of the search and how it measured against the objectives.
struct CapacityRun {
  /// kRate: the arrival rate simulated. kMaxConcurrency: the finished requests per second the
  /// run achieved (closed-loop clients have no rate of their own).
  double rate_per_s = 0.0;
  bool meets = false;
  Duration ttft_p99, tpot_p99, e2e_p99;
  double goodput_per_s = 0.0;
  std::int64_t max_num_seqs = 0;
  std::int64_t max_concurrency = 0;  // the run's client gate; 0: none (open loop)
};

struct CapacityServeAnswer {
  CapacityAxis axis = CapacityAxis::kRate;
  std::string model, gpu, workload;
  std::optional<Duration> ttft_p99, tpot_p99, e2e_p99;
  double max_rate_per_s = 0.0;     // the highest rate seen to meet the SLOs (0: none did)
  double bracket_low = 0.0;        // meets
  double bracket_high = 0.0;       // fails (0: no failing rate found below the search cap)
  /// For a trace: the simulation at the trace's own rate that measured that rate (not a step of
  /// the bisection, which then starts there).
  std::optional<CapacityRun> trace_probe;
  std::vector<CapacityRun> runs;   // the bisection, in order
  /// kMaxConcurrency: the most clients seen to meet the SLOs (0: not even one did), and the
  /// bracket (low meets, high misses; high 0: none missed up to the cap). The rate fields
  /// above then stay 0.
  std::int64_t max_concurrency = 0;
  std::int64_t concurrency_low = 0;
  std::int64_t concurrency_high = 0;
  std::vector<CapacityRun> seq_runs;  // the max_num_seqs search at the answer
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
/// "capacity.precision", "capacity.max_runs", "capacity.max_concurrency_cap", "capacity.slo"
/// (no objective), "workload.max_concurrency" (a closed loop under the rate axis) or
/// "capacity.slo_ttft_p99" / "capacity.slo_tpot_p99" / "capacity.slo_e2e_p99" (not positive);
/// the base configuration's problems as run::prepare_serve reports them; an infeasible
/// configuration under "model.id" naming why, a trace whose arrivals span no time under
/// "workload.trace".
CapacityServeAnswer capacity_serve(const CapacitySearch& search);

}  // namespace vramsim::run
