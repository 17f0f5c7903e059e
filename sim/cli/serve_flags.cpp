#include "sim/cli/serve_flags.hpp"

#include "sim/cli/flag_suggestions.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace vramsim::cli {

namespace {

bool is_engine_row(const run::ServeOptionRow& row) { return row.group.empty(); }

}  // namespace

bool is_positional_model(const std::string& word) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(word, ec);
  if (fs::is_regular_file(st)) return word.size() > 5 && word.substr(word.size() - 5) == ".json";
  if (fs::is_directory(st)) return fs::is_regular_file(fs::path(word) / "config.json", ec);
  if (fs::exists(st) || word.empty() || word.front() == '-') return false;
  const std::string lower = [&] {
    std::string l = word;
    for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  }();
  const bool toml = lower.size() > 5 && lower.substr(lower.size() - 5) == ".toml";
  // A Hugging Face id is ORG/NAME (or a bare NAME); a path that names a missing file is not.
  return !toml && !(lower.size() > 5 && lower.substr(lower.size() - 5) == ".json");
}

CLI::Validator scenario_file_check(const CLI::App* cmd, bool model_allowed) {
  return CLI::Validator(
      [cmd, model_allowed](std::string& path) -> std::string {
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
        // Not a file: the model, positionally, as `vllm serve MODEL` takes it (a Hugging Face
        // id, or a folder holding config.json); a .toml name is a scenario that is missing.
        if (model_allowed && is_positional_model(path)) return "";
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
  cmd.add_option("scenario", f.scenario,
                 "Scenario file (TOML), or the model as `vllm serve MODEL` takes it (a Hugging "
                 "Face id, a config.json or a folder holding one); flags override it")
      ->check(scenario_file_check(&cmd, true));
  add_schema_flags(cmd, run::serve_option_rows(), f.settings, is_engine_row);
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  cmd.add_option("scenario", f.scenario,
                 "Scenario file (TOML), or the model as `vllm serve MODEL` takes it (a Hugging "
                 "Face id, a config.json or a folder holding one); flags override it")
      ->check(scenario_file_check(&cmd, true));
  add_schema_flags(cmd, run::serve_option_rows(), f.settings);
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
  add_format_option(cmd, f.format);
}

ValidationReport on_flags(const run::ServeOptions& o, const ValidationReport& report,
                          std::span<const FlagForPath> extra) {
  return named_by_flags(run::located(o, report), run::serve_option_rows(), extra);
}

run::ServeOptions resolve_serve(const ServeFlags& f, const run::GivenValues& fallback) {
  try {
    run::ScenarioValues sc;
    run::GivenValues flags = f.settings.given_values();
    for (const auto& [path, value] : fallback) flags.emplace(path, value);
    if (!f.scenario.empty() && is_positional_model(f.scenario)) {
      // `vramsim budget MODEL ...`: the model as --model would give it.
      if (const auto it = flags.find("model.id"); it != flags.end()) {
        const auto* given = std::get_if<std::string>(&it->second.value);
        if (given == nullptr || *given != f.scenario) {
          ValidationReport r;
          r.error("model.id", fmt::format("given twice: '{}' as the first argument and '{}' with "
                                          "--model; give one",
                                          f.scenario, given != nullptr ? *given : "?"));
          throw ConfigError(std::move(r));
        }
      }
      run::GivenValue& g = flags["model.id"];
      g.value = f.scenario;
      g.origin.kind = run::OriginKind::kFlag;
      g.origin.flag = "MODEL";
    } else if (!f.scenario.empty()) {
      sc = run::load_serve_scenario(f.scenario);
    }
    return run::resolve_serve_options(sc, flags);
  } catch (const ConfigError& e) {
    throw ConfigError(named_by_flags(e.report(), run::serve_option_rows()));
  }
}

}  // namespace vramsim::cli
