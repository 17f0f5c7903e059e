// A measured serving run of tests/validation/ replayed as the scenario it ran: the test writes
// the scenario's TOML, and every serving validation test prepares and simulates it the same way
// (as `vramsim serve` runs a scenario file named after the row's run_id).
#pragma once

#include <cstdint>
#include <string>

#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim::testing {

/// `toml` (a serve scenario) for `row`, prepared and simulated through the run layer; the
/// answer must be feasible and all `num_requests` requests must finish.
inline run::ServeAnswer simulated_serve_of_row(const ValidationRow& row, const std::string& toml,
                                               std::int64_t num_requests) {
  run::ServeAnswer a = run::prepare_serve(run::resolve_serve_options(
      run::load_serve_scenario_text(toml, row.at("run_id") + ".toml")));
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  REQUIRE(a.result.metrics.num_finished == num_requests);
  return a;
}

/// vLLM's total_token_throughput: the finished requests' prompt tokens and the output tokens
/// over the run (vllm/benchmarks/serve.py, calculate_metrics), as serve's results report it.
inline double total_tokens_per_s(const serving::ServingResult& r) {
  return run::per_second(r.metrics.num_prompt_tokens + r.metrics.num_output_tokens,
                         r.duration_s());
}

}  // namespace vramsim::testing
