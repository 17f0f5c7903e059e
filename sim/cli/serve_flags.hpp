// The flags of `budget`, `serve`, `compare serve` and `capacity serve`, bound to CLI11 from the
// serving option schema (sim/run/serve_options.hpp), and the naming of problems: the run layer
// reports config paths, each at its scenario file:line when a scenario set it; here a path no
// scenario set is named by its flag.
#pragma once

#include <CLI/CLI.hpp>

#include <span>
#include <string>
#include <utility>

#include "sim/cli/commands.hpp"
#include "sim/cli/schema_flags.hpp"
#include "sim/core/error.hpp"
#include "sim/run/serve_options.hpp"

namespace vramsim::cli {

struct ServeFlags {
  std::string scenario;
  SchemaFlags settings;
  std::string out;
  std::string timeline_out;  // `serve` only: the Chrome trace of the steps and requests
  OutputFormat format = OutputFormat::kTable;
};

/// The check of a command's scenario argument: an existing regular file. A missing one that
/// follows an unknown flag on the command line is named as that flag ("--modle x": the value
/// of a mistyped flag taken as the scenario), not as a missing file.
/// With `model_allowed`, a word that is_positional_model accepts passes too.
CLI::Validator scenario_file_check(const CLI::App* cmd, bool model_allowed = false);
/// Whether a command's first argument is the model rather than a scenario file, as `vllm serve
/// MODEL` takes it: a config.json file, a folder holding one, or a word that names no file and
/// does not end in .toml (a Hugging Face id).
bool is_positional_model(const std::string& word);
/// The check of --out and other file names: not empty ("--out $UNSET" must not write nothing
/// and exit 0).
CLI::Validator non_empty_check();

/// Registers the scenario argument, every row of the serving schema, --out and --format.
void add_serve_flags(CLI::App& cmd, ServeFlags& f);
/// Registers the scenario argument and the engine rows only (model, GPU, vLLM's engine
/// arguments: `budget`'s), without --out and --format.
void add_engine_flags(CLI::App& cmd, ServeFlags& f);

/// `report` located at the options' origins, and then every unlocated path named by its flag
/// (a path of `extra` by its flag, with its hint).
ValidationReport on_flags(const run::ServeOptions& o, const ValidationReport& report,
                          std::span<const FlagForPath> extra = {});

/// The scenario (if any) read and the flags merged over it (the run layer). Throws ConfigError
/// naming each flag, or the scenario field with its file:line. `fallback` holds values for
/// paths no flag set, taken over the scenario's (plan serve's first --search-gpu as the GPU).
run::ServeOptions resolve_serve(const ServeFlags& f, const run::GivenValues& fallback = {});

/// Runs `fn` (a run-layer call on `o`), its ConfigError's problems passed through on_flags.
template <class F>
auto on_flags(const run::ServeOptions& o, F&& fn, std::span<const FlagForPath> extra = {}) {
  try {
    return std::forward<F>(fn)();
  } catch (const ConfigError& e) {
    throw ConfigError(on_flags(o, e.report(), extra));
  }
}

}  // namespace vramsim::cli
