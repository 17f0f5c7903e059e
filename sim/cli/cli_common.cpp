#include "sim/cli/commands.hpp"

#include "sim/run/data_root.hpp"

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
  cmd.add_option("--format", format, "Output: table for people, json for scripts")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, OutputFormat>{{"table", OutputFormat::kTable},
                                              {"json", OutputFormat::kJson}},
          CLI::ignore_case));
}

}  // namespace vramsim::cli
