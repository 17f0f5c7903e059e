// ResultsWriter: one HDF5 results file per run, written crash-safely.
//
// The file is built under a temporary name in the destination directory
// (`<final>.tmp-<pid>`, the final name cut from its end so that the temporary name fits in
// NAME_MAX = 255 bytes) and only an explicit finish() fsyncs it and renames it atomically onto
// the final name. A writer destroyed without finish() (an exception, an early return) deletes
// its temporary file and leaves the final name untouched, so a previous complete file there
// survives. A `*.tmp-*` file next to a results file is the leftover of a killed process.
//
// Contents (the contract with Python is analysis/SCHEMA.md): attributes of type string, int64
// or double on any group or dataset; 1-D columnar datasets of int64, double or UTF-8 strings,
// each with a `units` attribute; tables = a group of equal-length columns plus a `columns`
// attribute giving their order. Object time stamps are off, so identical inputs give identical
// files. HDF5 stays behind this interface (pimpl): no HDF5 header is included here.
//
//   ResultsWriter out("runs/budget.h5");                 // throws ConfigError("--out", ...)
//   out.write_run_metadata({.command = "vramsim budget ...", .seed = 1, .created_by = "..."});
//   std::vector<std::int64_t> device{0, 1};
//   std::vector<std::int64_t> weights{8'030'000'000, 8'030'000'000};
//   out.write_table("/budget", {Column::int64("device_index", kUnitsCount, device),
//                               Column::int64("weights_bytes", kUnitsBytes, weights)});
//   out.finish();                                          // now runs/budget.h5 exists
#pragma once

#include "sim/io/results_types.hpp"
#include "sim/io/table_writer.hpp"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim::io {

/// The file-level attributes every results file carries (analysis/SCHEMA.md).
/// NOTE: every member has a default initializer so designated initializers may skip fields
/// without -Wmissing-field-initializers.
struct RunMetadata {
  /// Empty means this build's version (vramsim_version()).
  std::string vramsim_version{};
  /// The command line as typed, e.g. "vramsim budget --model ... --out r.h5".
  std::string command{};
  /// Full text of the scenario file, or "" when the run was given by flags only.
  std::string scenario_text{};
  std::int64_t seed = 0;
  /// The resolved inputs as one JSON object (what was actually simulated, defaults included).
  std::string inputs{};
  /// Path of the calibration profile used, or a word naming the built-in defaults ("defaults").
  std::string calibration_source{};
  /// The program and subcommand that wrote the file, e.g. "vramsim budget". No host or user
  /// names or times: files must be byte-comparable across runs.
  std::string created_by{};
};

/// The version string of this build (the CMake project version).
std::string_view vramsim_version();

class ResultsWriter {
 public:
  /// Creates the temporary file next to `final_path` and writes `schema_version`. Throws
  /// ConfigError (field "--out", message naming the path) when the directory does not exist or
  /// the file cannot be created. The directory is not created.
  explicit ResultsWriter(std::filesystem::path final_path, WriterOptions options = {});
  /// Without a successful finish(): closes and deletes the temporary file.
  ~ResultsWriter();
  ResultsWriter(ResultsWriter&&) noexcept;
  ResultsWriter& operator=(ResultsWriter&&) noexcept;
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  /// Writes the RunMetadata fields as attributes of the root group "/".
  void write_run_metadata(const RunMetadata& meta);

  /// Creates a group and its missing parents; a no-op if it exists. Paths are absolute or
  /// relative to "/" ("budget" == "/budget").
  void create_group(std::string_view path);

  /// Sets (or replaces) an attribute on the group or dataset at `object_path`; a missing
  /// object is created as a group. Strings are UTF-8 and may not contain NUL (ConfigError).
  void set_string_attribute(std::string_view object_path, std::string_view name,
                            std::string_view value);
  void set_int_attribute(std::string_view object_path, std::string_view name, std::int64_t value);
  void set_double_attribute(std::string_view object_path, std::string_view name, double value);

  /// Writes one column as dataset `<group>/<column.name>` (group created if missing). Writing
  /// the same dataset twice, an empty units string on a numeric column or a non-empty one on a
  /// string column are programmer errors.
  void write_column(std::string_view group, const Column& column);

  /// Writes a whole table: every column under `group`, plus the group attribute `columns` (the
  /// column names in the given order; HDF5 itself lists them alphabetically). All columns must
  /// have the same length and distinct names (programmer errors otherwise).
  void write_table(std::string_view group, std::span<const Column> columns);
  void write_table(std::string_view group, std::initializer_list<Column> columns) {
    write_table(group, std::span<const Column>(columns.begin(), columns.size()));
  }

  /// Starts a streaming table under `group` (which must not hold these datasets yet): one empty
  /// extendible dataset per column, with `units` and the group's `columns` attribute.
  TableWriter open_table(std::string_view group, std::vector<ColumnSpec> columns);

  /// Flushes open tables, closes the file, fsyncs it, renames it onto the final name and fsyncs
  /// the directory. Afterwards the writer accepts nothing more (programmer error). On failure it
  /// throws (ConfigError, field "--out", naming the path) and the destructor cleans up.
  void finish();

  bool finished() const;
  const std::filesystem::path& final_path() const;
  /// Where the file is being written until finish().
  const std::filesystem::path& temp_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vramsim::io
