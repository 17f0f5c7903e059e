// Plain types shared by the results writer, the streaming table writer and the reader.
//
//   Column      a named, typed, 1-D column that *references* caller-owned values (no copy),
//               plus its `units` string. Written whole by ResultsWriter::write_column/write_table.
//   ColumnSpec  name, type and units of a column whose rows arrive later (TableWriter).
//   Cell        one value of a row appended to a TableWriter (int64, double or string).
//   WriterOptions  when datasets are chunked and compressed, and how.
//
// Units are plain strings stored in each dataset's `units` attribute (analysis/SCHEMA.md):
// "B" bytes, "ns" nanoseconds, "s" seconds, "FLOP", "1" counts and dimensionless numbers,
// "" for string columns. Numeric columns must name a unit.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "sim/core/enum_table.hpp"

namespace vramsim::io {

/// Version of the file layout described in analysis/SCHEMA.md; stored as `schema_version`.
/// 2: serve's per-request and time-series times carry their unit in the name (`arrival_ns`,
/// `time_ns`, `step_latency_ns`, ...; int64 ns as in 1, where they were `arrival`, `time`, ...).
inline constexpr std::int64_t kSchemaVersion = 2;

inline constexpr std::string_view kUnitsBytes = "B";
inline constexpr std::string_view kUnitsNanoseconds = "ns";
inline constexpr std::string_view kUnitsSeconds = "s";
inline constexpr std::string_view kUnitsFlop = "FLOP";
/// Counts, indices, flags and other dimensionless numbers.
inline constexpr std::string_view kUnitsCount = "1";
/// The units of a string column.
inline constexpr std::string_view kUnitsNone = "";

enum class ColumnType { kInt64, kFloat64, kString };
inline constexpr auto kColumnTypes = enum_table<ColumnType>({
    {ColumnType::kInt64, "int64", "64-bit signed integers"},
    {ColumnType::kFloat64, "float64", "IEEE doubles"},
    {ColumnType::kString, "string", "UTF-8 text"},
});
static_assert(covers_every_enumerator(kColumnTypes) && names_are_unique(kColumnTypes));

/// How a string column is stored. kVariable: HDF5 variable-length UTF-8 strings (h5py returns
/// bytes objects; use `.asstr()`); the text itself is not compressed. kFixed: fixed-width
/// NUL-padded UTF-8 of the longest value's width (h5py returns `|S<n>`); compresses well.
enum class StringLayout { kVariable, kFixed };

std::string_view to_string(ColumnType type);

/// A named column referencing values owned by the caller; they must outlive the write call.
struct Column {
  std::string name;
  std::string units;
  std::variant<std::span<const std::int64_t>, std::span<const double>,
               std::span<const std::string>>
      values;
  StringLayout string_layout = StringLayout::kVariable;

  /// An int64 column; `units` must not be empty (use kUnitsCount for counts and flags).
  static Column int64(std::string name, std::string_view units,
                      std::span<const std::int64_t> values) {
    return Column{std::move(name), std::string(units), values, StringLayout::kVariable};
  }
  /// A double column; `units` must not be empty.
  static Column float64(std::string name, std::string_view units, std::span<const double> values) {
    return Column{std::move(name), std::string(units), values, StringLayout::kVariable};
  }
  /// A string column; its units are always "".
  static Column string(std::string name, std::span<const std::string> values,
                       StringLayout layout = StringLayout::kVariable) {
    return Column{std::move(name), std::string(kUnitsNone), values, layout};
  }

  ColumnType type() const {
    if (values.index() == 0) return ColumnType::kInt64;
    if (values.index() == 1) return ColumnType::kFloat64;
    return ColumnType::kString;
  }
  std::size_t size() const {
    return std::visit([](const auto& span) { return span.size(); }, values);
  }
};

/// A column of a streaming table (TableWriter). String columns are variable-length.
struct ColumnSpec {
  std::string name;
  ColumnType type = ColumnType::kInt64;
  std::string units;  // must be "" for strings and non-empty otherwise
};

/// One value of a row given to TableWriter::append_row.
/// NOTE: the constructors are implicit on purpose, so a row reads `{3, 2.5, "prefill"}`; any
/// integral type becomes int64 and any floating-point type becomes double.
class Cell {
 public:
  template <std::integral T>
  Cell(T v) : value_(static_cast<std::int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  template <std::floating_point T>
  Cell(T v) : value_(static_cast<double>(v)) {}  // NOLINT(google-explicit-constructor)
  Cell(std::string_view s) : value_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  Cell(const char* s) : value_(std::string(s)) {}       // NOLINT(google-explicit-constructor)
  Cell(const std::string& s) : value_(s) {}             // NOLINT(google-explicit-constructor)

  const std::variant<std::int64_t, double, std::string>& value() const { return value_; }
  ColumnType type() const {
    if (value_.index() == 0) return ColumnType::kInt64;
    if (value_.index() == 1) return ColumnType::kFloat64;
    return ColumnType::kString;
  }

 private:
  std::variant<std::int64_t, double, std::string> value_;
};

/// Storage choices. The defaults keep a million-row column small and a tiny table contiguous.
struct WriterOptions {
  /// Datasets with at least this many rows are chunked, shuffled and deflate-compressed;
  /// smaller ones are stored contiguous (compression would only add overhead).
  std::int64_t compress_min_rows = 4096;
  /// Rows per chunk (capped at 4 MiB per chunk for wide fixed strings). Also the number of rows
  /// a TableWriter buffers before writing them out, which bounds its memory.
  std::int64_t chunk_rows = 65536;
  /// zlib level 1..9.
  int deflate_level = 4;
};

}  // namespace vramsim::io
