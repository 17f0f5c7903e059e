// A small checked reader over one TOML file, shared by every loader that reads TOML (topologies,
// scenarios). It hides toml++ (only sim/io/ may include it) behind typed accessors keyed by a
// dotted field path ("memory.total", "replicas[0].gpu") and collects every problem into a
// ValidationReport as {field path, message, file:line of the value}, so a user sees all mistakes
// of a file at once:
//
//   topologies/devices/h100-sxm.toml:7: memory.total: unknown unit "gb" in size "80gb"; ...
//
// Usage:
//
//   TomlReader r = TomlReader::from_file(path);        // syntax error -> ConfigError (file:line)
//   auto name  = r.required_string("name");             // missing -> problem recorded, nullopt
//   auto total = r.required_bytes("memory.total");      // "80GiB"; a bare 80 is a problem
//   auto link  = r.optional_bandwidth("peer_link.bandwidth_per_direction");
//   if (total && *total <= Bytes(0)) r.error("memory.total", "must be positive");
//   r.finish();   // reports keys nobody read (typos), then throws ConfigError if any problem
//
// Accessor contract: every accessor returns std::nullopt when it cannot give a value. A
// `required_*` accessor records a problem when the field is absent; an `optional_*` accessor
// records nothing when it is absent. Both record a problem when the field is present with the
// wrong type or an unparsable unit. Every accessor, even one that finds nothing, marks the path
// as "read" and remembers it as a known key, which drives the "unknown key; did you mean" check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace vramsim::io {

class TomlReader {
 public:
  /// Reads and parses `file`. Throws ConfigError naming the file when it cannot be read, and
  /// ConfigError with file:line and the column when the text is not valid TOML. The file is
  /// named in messages exactly as `file` is spelled.
  static TomlReader from_file(const std::filesystem::path& file);
  /// Parses `text`; `source_name` stands for the file in messages. Throws like from_file.
  static TomlReader from_string(std::string_view text, std::string source_name);

  TomlReader(TomlReader&&) noexcept;
  TomlReader& operator=(TomlReader&&) noexcept;
  TomlReader(const TomlReader&) = delete;
  TomlReader& operator=(const TomlReader&) = delete;
  ~TomlReader();

  /// The file name used in messages.
  const std::string& source_name() const;

  // --- Scalars --------------------------------------------------------------------------------
  std::optional<std::string> required_string(std::string_view path);
  std::optional<std::string> optional_string(std::string_view path);
  std::optional<std::int64_t> required_int64(std::string_view path);
  std::optional<std::int64_t> optional_int64(std::string_view path);
  /// Accepts a TOML float or integer.
  std::optional<double> required_double(std::string_view path);
  std::optional<double> optional_double(std::string_view path);
  std::optional<bool> required_bool(std::string_view path);
  std::optional<bool> optional_bool(std::string_view path);

  // --- Arrays (every element must have the type; the whole array counts as read) -------------
  std::optional<std::vector<std::string>> required_string_array(std::string_view path);
  std::optional<std::vector<std::string>> optional_string_array(std::string_view path);
  std::optional<std::vector<std::int64_t>> required_int64_array(std::string_view path);
  std::optional<std::vector<std::int64_t>> optional_int64_array(std::string_view path);
  std::optional<std::vector<double>> required_double_array(std::string_view path);
  std::optional<std::vector<double>> optional_double_array(std::string_view path);

  // --- Quantities: a string with a unit, parsed by the core parse_* functions ----------------
  // A bare number is refused with a hint to add the unit; a unit error carries the core hint.
  std::optional<Bytes> required_bytes(std::string_view path);
  std::optional<Bytes> optional_bytes(std::string_view path);
  std::optional<Bandwidth> required_bandwidth(std::string_view path);
  std::optional<Bandwidth> optional_bandwidth(std::string_view path);
  std::optional<FlopRate> required_flop_rate(std::string_view path);
  std::optional<FlopRate> optional_flop_rate(std::string_view path);
  std::optional<Duration> required_duration(std::string_view path);
  std::optional<Duration> optional_duration(std::string_view path);

  // --- Structure ------------------------------------------------------------------------------
  /// True when `path` names any value or table. Marks nothing as read.
  bool has(std::string_view path) const;
  /// True when `path` is a table; records a problem when it is absent or not a table.
  bool required_table(std::string_view path);
  /// True when `path` is a table; records a problem only when it exists but is not a table.
  bool optional_table(std::string_view path);
  /// The keys of the table at `path` ("" = the root), sorted by name, or an empty vector when
  /// there is no such table. The caller reads the children it wants through their own paths.
  std::vector<std::string> table_keys(std::string_view path) const;
  /// Number of elements of the array (of tables or values) at `path`; 0 when absent. Records a
  /// problem when `path` exists but is not an array. Read elements as "path[i].key".
  std::size_t array_size(std::string_view path);
  /// Declares the subtree at `path` as consumed without reading it (e.g. a free-form "notes").
  void mark_read(std::string_view path);
  /// Every path an accessor has asked for so far (fields and tables), sorted: after a loader
  /// ran, the keys its files may hold.
  std::vector<std::string> known_paths() const;

  // --- Problems -------------------------------------------------------------------------------
  /// Where `path` is written: its value's line, else the nearest enclosing table's line, else
  /// line 0 (the file only).
  SourceLocation location(std::string_view path) const;
  /// Records a problem about `path` found by the caller (a range check, a cross-field rule).
  void error(std::string_view path, std::string message);
  /// Records "unknown key" for every value that no accessor read, with "did you mean" when a
  /// key the loader asked for is within two edits. Call once, after reading everything.
  void report_unread_keys();
  const ValidationReport& report() const;
  /// report_unread_keys(), then throws ConfigError holding every problem, if any.
  void finish();

 private:
  struct Impl;
  explicit TomlReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Joins a table path and a key: join_path("memory", "total") == "memory.total";
/// join_path("", "id") == "id".
std::string join_path(std::string_view parent, std::string_view key);

/// The whole file, stored verbatim in results files (empty if it cannot be read: the TOML
/// reader has already reported that).
std::string read_file_text(const std::filesystem::path& file);

}  // namespace vramsim::io
