#include "sim/cli/serve_flags.hpp"

#include "sim/cli/flag_suggestions.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <system_error>

namespace vramsim::cli {

namespace {

bool is_engine_row(const run::ServeOptionRow& row) { return row.group.empty(); }

}  // namespace

CLI::Validator scenario_file_check(const CLI::App* cmd) {
  return CLI::Validator(
      [cmd](std::string& path) -> std::string {
        namespace fs = std::filesystem;
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (fs::is_regular_file(st)) return "";
        // NOTE: the words of the command line, split at spaces: enough to find "--flag value".
        std::istringstream words(command_line());
        std::string previous, word;
        while (words >> word) {
          if (word == path && previous.rfind("--", 0) == 0 &&
              cmd->get_option_no_throw(previous) == nullptr) {
            return fmt::format("{} (its value '{}' was taken as the scenario file)",
                               unknown_flag_message(*cmd, previous), path);
          }
          previous = word;
        }
        if (fs::is_directory(st)) return fmt::format("'{}' is a directory, not a scenario file", path);
        if (fs::exists(st)) return fmt::format("'{}' is not a regular file", path);
        return fmt::format("scenario file '{}' does not exist", path);
      },
      "FILE", "scenario file");
}

CLI::Validator non_empty_check() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value.empty() ? "must not be empty (an unset shell variable?)" : "";
      },
      "", "not empty");
}

void add_engine_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("scenario", f.scenario, "Scenario file (TOML); flags override it")
      ->check(scenario_file_check(&cmd));
  add_schema_flags(cmd, run::serve_option_rows(), f.settings, is_engine_row);
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("scenario", f.scenario, "Scenario file (TOML); flags override it")
      ->check(scenario_file_check(&cmd));
  add_schema_flags(cmd, run::serve_option_rows(), f.settings);
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
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
