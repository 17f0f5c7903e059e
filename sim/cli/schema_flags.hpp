// The CLI11 binding of an option schema (sim/run/option_schema.hpp): one walk over its rows
// registers every setting's flag (and vLLM's spelling of it), reads back what was given as
// values by scenario path, and names problems: the run layer reports config paths; here a path
// no scenario set is named by its flag.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/run/option_schema.hpp"

namespace vramsim::cli {

/// A path that is not a schema row (a command's own setting) and the flag that sets it.
struct FlagForPath {
  std::string_view path;  // "capacity.precision"
  std::string_view flag;  // "--precision"
  std::string_view hint;  // appended to the message ("" for none)
};

/// What CLI11 wrote for each registered row, by flag.
struct SchemaFlags {
  struct Value {
    std::string path;
    run::ValueKind kind = run::ValueKind::kString;
    std::string text;
    std::int64_t integer = 0;
    double number = 0.0;
    bool boolean = false;
    CLI::Option* option = nullptr;
  };
  std::map<std::string, Value, std::less<>> values;  // by flag

  /// True when the flag was given on the command line.
  bool given(std::string_view flag) const;
  /// The given flags, as values by scenario path (origin: the flag).
  run::GivenValues given_values() const;

  /// Registers one row: `flag` (and `alias`), typed by `kind`, in `group` ("" for none). A
  /// boolean gets its negation too ("--no-enable-prefix-caching").
  void add(CLI::App& cmd, std::string_view path, std::string_view flag, std::string_view alias,
           run::ValueKind kind, const std::string& help, std::string_view group);
};

/// Registers every row of `rows` that `keep` accepts (all when null).
template <class O>
void add_schema_flags(CLI::App& cmd, std::span<const run::OptionRow<O>> rows, SchemaFlags& f,
                      bool (*keep)(const run::OptionRow<O>&) = nullptr) {
  for (const run::OptionRow<O>& row : rows) {
    if (keep != nullptr && !keep(row)) continue;
    f.add(cmd, row.path, row.flag, row.alias, row.kind, run::help_text(row), row.group);
  }
}

/// `report` with every problem on a path of `rows` (or of `extra`) that has no file:line named
/// by its flag instead.
template <class O>
ValidationReport named_by_flags(const ValidationReport& report,
                                std::span<const run::OptionRow<O>> rows,
                                std::span<const FlagForPath> extra = {}) {
  ValidationReport out;
  for (const Problem& p : report.problems()) {
    std::string field = p.field;
    std::string message = p.message;
    if (p.where.file.empty()) {
      const run::OptionRow<O>* row = run::find_option(rows, p.field);
      if (row != nullptr && row->path == p.field) field = std::string(row->flag);
      for (const FlagForPath& m : extra) {
        if (m.path != p.field) continue;
        field = std::string(m.flag);
        message += m.hint;
      }
    }
    out.error(field, message, p.where);
  }
  return out;
}

}  // namespace vramsim::cli
