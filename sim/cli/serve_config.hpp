// What `vramsim serve` resolved from its scenario file and flags: the engine (as for budget), the
// workload, the serving policies and the SLOs, each problem reported on the flag or the
// scenario's file:line.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/engine_flags.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::cli {

struct ServeFlags {
  std::string scenario;
  /// When set, the scenario's TOML text (read instead of the file; `scenario` names it in
  /// messages). `vramsim sweep` passes each point's scenario this way.
  std::string scenario_text;
  EngineFlags engine;
  GivenFlags given;
  // Workload.
  std::string trace, trace_format = "auto", on_malformed = "error", synthetic = "azure-conv";
  std::string prompt_tokens, output_tokens, duration, window_start, window_end;
  double rate = 0.0, cv = 1.0, time_scale = 1.0;
  std::int64_t num_requests = 1000, prefix_groups = 0, prefix_tokens = 0, max_requests = 0;
  std::int64_t max_prompt_tokens = 0, max_output_tokens = 0, max_total_tokens = 0;
  // Serving.
  std::int64_t replicas = 1, chunk_size = 512;
  std::string scheduler = "vllm", router = "round-robin", preemption = "recompute";
  std::string swap_space = "4GiB", timeseries_interval = "0s";
  bool prefix_caching = true, chunked_prefill = true;
  // Objectives.
  std::string slo_ttft, slo_tpot, slo_e2e;
  // Output.
  std::string out;
  OutputFormat format = OutputFormat::kTable;
};

/// Registers every serve flag on `cmd`.
void add_serve_flags(CLI::App& cmd, ServeFlags& f);

using run::ServeConfig;


/// Merges flags over the scenario, validates everything and throws ConfigError listing every
/// problem (each on its flag, or on the scenario field with its file:line).
ServeConfig resolve_serve(const ServeFlags& f, Origins& origins);

}  // namespace vramsim::cli
