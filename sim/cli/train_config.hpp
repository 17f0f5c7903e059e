// The flags of `vramsim train` (and of `capacity train`, `compare train`), bound to CLI11 from
// the training option schema (sim/run/train_options.hpp), and the naming of problems: the run
// layer reports config paths; here a path the scenario did not set is named by its flag.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/cli/commands.hpp"
#include "sim/cli/schema_flags.hpp"
#include "sim/core/error.hpp"
#include "sim/run/train_options.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

struct TrainFlags {
  std::string scenario, out;
  // `train` only (not compare/capacity): the Chrome trace and PyTorch memory snapshot files.
  std::string timeline_out, memory_snapshot_out;
  bool find_max = false;
  OutputFormat format = OutputFormat::kTable;
  SchemaFlags settings;  // every row of the training schema

  /// True when the flag was given on the command line.
  bool given(std::string_view flag) const { return settings.given(flag); }
  /// The value given to an integer flag (0 when not given).
  std::int64_t integer(std::string_view flag) const;
  /// The given flags, as values by scenario path.
  run::GivenValues given_values() const { return settings.given_values(); }
};

/// Registers the scenario argument and every row of the schema (its flag, type and help) on
/// `cmd`, plus --out and --format.
void add_train_flags(CLI::App& cmd, TrainFlags& f);

/// `report` with every problem on a schema path that has no file:line named by its flag instead.
ValidationReport named_by_flags(const ValidationReport& report);

/// The scenario (if any) read, the flags merged over it, and the setup resolved (run layer).
/// Throws ConfigError naming each flag, or the scenario field with its file:line.
struct TrainInputs {
  run::TrainOptions options;
  training::TrainingSetup setup;
};
TrainInputs resolve_train(const TrainFlags& f);

}  // namespace vramsim::cli
