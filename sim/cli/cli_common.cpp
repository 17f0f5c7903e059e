#include "sim/cli/commands.hpp"

#include "sim/run/data_root.hpp"

#include <fmt/format.h>

#include <map>

namespace vramsim::cli {

std::filesystem::path project_root() { return run::project_root(); }

namespace {
std::string& command_line_storage() {
  static std::string text;
  return text;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  std::string& text = command_line_storage();
  text = "vramsim";
  for (int i = 1; i < argc; ++i) {
    text += ' ';
    text += argv[i];
  }
}

const std::string& command_line() { return command_line_storage(); }

void add_format_option(CLI::App& cmd, OutputFormat& format) {
  std::string help = "Output:";
  std::map<std::string, OutputFormat> names;
  for (const EnumRow<OutputFormat>& r : kOutputFormats.rows) {
    help += fmt::format("{} {} {}", names.empty() ? "" : ",", r.name, r.description);
    names.emplace(std::string(r.name), r.value);
  }
  cmd.add_option("--format", format, help)
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case));
}

}  // namespace vramsim::cli
