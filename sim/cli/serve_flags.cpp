#include "sim/cli/serve_flags.hpp"

namespace vramsim::cli {

namespace {

bool is_engine_row(const run::ServeOptionRow& row) { return row.group.empty(); }

}  // namespace

void add_engine_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("scenario", f.scenario, "Scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  add_schema_flags(cmd, run::serve_option_rows(), f.settings, is_engine_row);
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("scenario", f.scenario, "Scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  add_schema_flags(cmd, run::serve_option_rows(), f.settings);
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)");
  add_format_option(cmd, f.format);
}

ValidationReport on_flags(const run::ServeOptions& o, const ValidationReport& report,
                          std::span<const FlagForPath> extra) {
  return named_by_flags(run::located(o, report), run::serve_option_rows(), extra);
}

run::ServeOptions resolve_serve(const ServeFlags& f) {
  try {
    run::ScenarioValues sc;
    if (!f.scenario.empty()) sc = run::load_serve_scenario(f.scenario);
    return run::resolve_serve_options(sc, f.settings.given_values());
  } catch (const ConfigError& e) {
    throw ConfigError(named_by_flags(e.report(), run::serve_option_rows()));
  }
}

}  // namespace vramsim::cli
