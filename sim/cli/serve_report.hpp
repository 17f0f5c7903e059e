// `vramsim serve` from its flags: preparing the run with problems named on the flags, and the
// answer as a table for people. The JSON and HDF5 records are the run layer's
// (sim/run/serve_results.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/serve_config.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::cli {

using run::ServeAnswer;
using run::simulate_serve;

/// Resolves flags over the scenario, sizes the KV cache with the budget and validates the
/// policies. Throws ConfigError for bad input; an infeasible configuration (weights do not fit)
/// is returned with feasible == false and budget.result.reason saying why.
ServeAnswer prepare_serve(const ServeFlags& f);

/// The same from an already resolved configuration (e.g. one option of `compare`): the run
/// layer's run::prepare_serve, with its problems moved onto the user's flags (a scheduler limit
/// "engine.max_num_seqs" onto --max-num-seqs) and, through `origins`, onto scenario lines.
ServeAnswer prepare_serve(ServeConfig config, const Origins& origins);

/// A run-layer config path and the flag a user sets it with; `hint` is appended to the message.
struct FlagForPath {
  std::string_view path, flag, hint;
};

/// A run layer's problems moved onto the user's flags: a path of `paths` onto its flag, a
/// scheduler limit "engine.max_num_seqs" onto --max-num-seqs, then through `origins` onto the
/// scenario's file:line where the value came from there.
ValidationReport on_flags(const ValidationReport& problems, const Origins& origins,
                          std::span<const FlagForPath> paths = {});

/// The run's summary, latencies and KV use as a table.
std::string serve_table(const ServeAnswer& a);

}  // namespace vramsim::cli
