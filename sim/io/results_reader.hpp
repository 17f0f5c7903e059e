// ResultsReader: reads a results file back (tests, `vramsim report`). Read-only; HDF5 stays
// behind the pimpl.
//
// Paths are absolute ("/budget/weights_bytes") or relative to "/". Everything that can go
// wrong with a file the user names (missing, not HDF5, lacking a dataset or attribute, a type
// other than the one asked for) throws ConfigError whose message names the file and the path.
//
//   ResultsReader in("runs/budget.h5");
//   for (const std::string& col : in.table_columns("/budget")) { ... }
//   std::vector<std::int64_t> w = in.read_int_column("/budget/weights_bytes");
//   std::string units = in.read_units("/budget/weights_bytes");   // "B"
#pragma once

#include "sim/io/results_types.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim::io {

class ResultsReader {
 public:
  /// Opens `path` read-only. Throws ConfigError (field "results") naming the path when it does
  /// not exist or is not an HDF5 file.
  explicit ResultsReader(const std::filesystem::path& path);
  ~ResultsReader();
  ResultsReader(ResultsReader&&) noexcept;
  ResultsReader& operator=(ResultsReader&&) noexcept;
  ResultsReader(const ResultsReader&) = delete;
  ResultsReader& operator=(const ResultsReader&) = delete;

  const std::filesystem::path& path() const;

  /// The file's `schema_version` (analysis/SCHEMA.md). Throws ConfigError naming the file when
  /// it has none.
  std::int64_t schema_version() const;
  /// Throws ConfigError (field "results") unless the file's schema_version is kSchemaVersion:
  /// an older file says which version it is and what changed since (SCHEMA.md, "Versions"), a
  /// newer one asks for a newer vramsim. Readers of a layout that changed call this first;
  /// analysis/vramsim_results.py reads version 1 files too.
  void require_current_schema() const;

  /// Whether a group or dataset exists at `path`.
  bool has_object(std::string_view path) const;
  /// Names (not paths) of the child groups of `group`, in alphabetical order.
  std::vector<std::string> list_groups(std::string_view group = "/") const;
  /// Names of the child datasets of `group`, in alphabetical order (see table_columns for the
  /// written order).
  std::vector<std::string> list_datasets(std::string_view group) const;

  /// Names of the attributes of the object at `path`, in alphabetical order.
  std::vector<std::string> list_attributes(std::string_view path) const;
  bool has_attribute(std::string_view path, std::string_view name) const;
  /// A scalar string attribute (variable- or fixed-length; fixed ones lose trailing NULs).
  std::string read_string_attribute(std::string_view path, std::string_view name) const;
  /// A scalar integer attribute.
  std::int64_t read_int_attribute(std::string_view path, std::string_view name) const;
  /// A scalar floating-point attribute; an integer attribute is converted.
  double read_double_attribute(std::string_view path, std::string_view name) const;
  /// A 1-D string attribute, e.g. a table's `columns`.
  std::vector<std::string> read_string_list_attribute(std::string_view path,
                                                      std::string_view name) const;

  /// The column order of a table group (its `columns` attribute).
  std::vector<std::string> table_columns(std::string_view group) const;

  /// The element type of a 1-D dataset (integers of any width are kInt64, floats kFloat64).
  ColumnType column_type(std::string_view dataset) const;
  /// Number of rows of a 1-D dataset.
  std::int64_t num_rows(std::string_view dataset) const;
  /// The dataset's `units` attribute.
  std::string read_units(std::string_view dataset) const;
  /// Whole columns. read_int_column needs an integer dataset; read_double_column also accepts
  /// an integer one (converted); read_string_column accepts variable- and fixed-length strings.
  std::vector<std::int64_t> read_int_column(std::string_view dataset) const;
  std::vector<double> read_double_column(std::string_view dataset) const;
  std::vector<std::string> read_string_column(std::string_view dataset) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vramsim::io
