// The subcommands of `vramsim`. Each registers its options on the CLI11 app and returns the
// function to run once parsing succeeded; that function returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <string>

#include "sim/core/enum_table.hpp"

namespace vramsim::cli {

using RunFn = std::function<int()>;

/// Where the data folders are: the source tree the binary was built from, unless the
/// VRAMSIM_ROOT environment variable points elsewhere.
std::filesystem::path project_root();

/// The command line as typed (set once by main), recorded in results files.
void set_command_line(int argc, char** argv);
const std::string& command_line();

/// `--format table|json`, shared by every command.
enum class OutputFormat { kTable, kJson };
/// --format (case-insensitive, as CLI11's ignore_case).
inline constexpr auto kOutputFormats = enum_table<OutputFormat>(
    {
        {OutputFormat::kTable, "table", "for people"},
        {OutputFormat::kJson, "json", "for scripts"},
    },
    NameMatch::kIgnoreCase);
static_assert(covers_every_enumerator(kOutputFormats) && names_are_unique(kOutputFormats));
void add_format_option(CLI::App& cmd, OutputFormat& format);

RunFn register_budget(CLI::App& app);
RunFn register_serve(CLI::App& app);
RunFn register_compare(CLI::App& app);
RunFn register_capacity(CLI::App& app);
RunFn register_bench(CLI::App& app);
RunFn register_list(CLI::App& app);
RunFn register_train(CLI::App& app);
RunFn register_report(CLI::App& app);
RunFn register_calibrate_report(CLI::App& app);
RunFn register_sweep(CLI::App& app);
RunFn register_plan(CLI::App& app);

}  // namespace vramsim::cli
