// TypedTable: a results table whose columns take their HDF5 `units` from the values' types.
//
// A column of Bytes is written as int64 "B", a column of Durations as float64 "s" (or int64
// "ns"), a rate as float64 "1/s", a count or flag as int64 "1". The unit is never guessed from
// the column's name; instead the name is checked against the unit (analysis/SCHEMA.md's naming
// rule: `_bytes`, `_s`, `_ns`, `_per_s`), and a mismatch is a programmer error. The table owns
// copies of the values, so it can be filled from temporaries and written once.
//
//   io::TypedTable t;
//   t.text("checkpointing", names).bytes("peak_reserved_bytes", reserved)
//    .seconds("step_time_s", steps).flag("fits", fits);
//   t.write(writer, "/capacity/probes");
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/results_types.hpp"

namespace vramsim::io {

/// The units of an event rate column (requests, tokens, ... per second).
inline constexpr std::string_view kUnitsPerSecond = "1/s";

class TypedTable {
 public:
  /// int64 "B"; the name ends in "_bytes".
  TypedTable& bytes(std::string name, std::span<const Bytes> values);
  /// float64 "s"; the name ends in "_s".
  TypedTable& seconds(std::string name, std::span<const Duration> values);
  /// int64 "ns"; the name ends in "_ns".
  TypedTable& nanoseconds(std::string name, std::span<const Duration> values);
  /// float64 "1/s": events per second (requests, tokens); the name ends in "_per_s".
  TypedTable& rate(std::string name, std::span<const double> per_second);
  /// int64 "1": counts, indices, sizes in items (sequences, tokens).
  TypedTable& count(std::string name, std::span<const std::int64_t> values);
  /// float64 "1": dimensionless ratios (MFU, efficiency).
  TypedTable& ratio(std::string name, std::span<const double> values);
  /// int64 0/1, "1" (SCHEMA.md: booleans).
  TypedTable& flag(std::string name, const std::vector<bool>& values);
  /// A string column ("").
  TypedTable& text(std::string name, std::span<const std::string> values);

  /// Rows of the table (0 before the first column).
  std::size_t num_rows() const;
  /// Writes every column under `group` in the order added (ResultsWriter::write_table).
  void write(ResultsWriter& writer, std::string_view group) const;

 private:
  void add(Column column);

  // A deque never moves its elements, so the spans in columns_ stay valid.
  std::deque<std::vector<std::int64_t>> ints_;
  std::deque<std::vector<double>> doubles_;
  std::deque<std::vector<std::string>> strings_;
  std::vector<Column> columns_;
};

}  // namespace vramsim::io
