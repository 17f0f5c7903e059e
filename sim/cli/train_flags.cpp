// The CLI11 binding of the training option schema: one walk over its rows.
#include <fmt/format.h>

#include "sim/cli/serve_flags.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/run/train_run.hpp"

namespace vramsim::cli {

std::int64_t TrainFlags::integer(std::string_view flag) const {
  return given(flag) ? settings.values.find(flag)->second.integer : 0;
}

void add_train_flags(CLI::App& cmd, TrainFlags& f) {
  cmd.add_option("scenario", f.scenario, "Training scenario file (TOML); flags override it")
      ->check(scenario_file_check(&cmd));
  add_schema_flags(cmd, run::train_option_rows(), f.settings);
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
  add_format_option(cmd, f.format);
}

ValidationReport named_by_flags(const ValidationReport& report) {
  return named_by_flags(report, run::train_option_rows());
}

TrainInputs resolve_train(const TrainFlags& f) {
  try {
    run::TrainScenario sc;
    if (!f.scenario.empty()) sc = run::load_train_scenario(f.scenario);
    run::TrainOptions o = run::resolve_train_options(sc, f.given_values());
    training::TrainingSetup s = run::resolve_training(o);
    return {std::move(o), std::move(s)};
  } catch (const ConfigError& e) {
    throw ConfigError(named_by_flags(e.report()));
  }
}

}  // namespace vramsim::cli
