// TypedTable: a results table whose columns take their HDF5 `units` from the values' types;
// TypedRecord: one row of named, typed values (a command's summary) that renders the same
// fields to JSON and to a one-row HDF5 table, so a field's name, unit and value are declared
// once; Quantity and name_fits: the one naming rule of analysis/SCHEMA.md.
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

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/results_types.hpp"

namespace vramsim::io {

/// The units of an event rate column (requests, tokens, ... per second).
inline constexpr std::string_view kUnitsPerSecond = "1/s";

/// What a plain number in a results file is. It fixes the HDF5 type, the `units` attribute and
/// the end of the name (analysis/SCHEMA.md, "names"):
///
///   quantity      HDF5     units   the name
///   kBytes        int64    "B"     ends in `_bytes`, or `_bytes_per_<item>` (kv_bytes_per_token)
///   kSeconds      float64  "s"     ends in `_s` (not `_per_s`)
///   kNanoseconds  int64    "ns"    ends in `_ns`
///   kRate         float64  "1/s"   ends in `_per_s`
///   kFlop         float64  "FLOP"  ends in `_flops`, or `_flops_per_<item>` (model_flops_per_step)
///   kCount        int64    "1"     carries no unit suffix (num_requests, micro_batch)
///   kRatio        float64  "1"     carries no unit suffix (mfu, prefix_hit_rate)
///   kFlag         int64    "1"     0/1, carries no unit suffix (fits)
///   kText         string   ""      anything
///   kUsd          float64  "USD"   US dollars; the name starts with `usd_` or holds `_usd`
///                                  (usd_per_hour, cost_per_million_tokens_usd); NaN: no price
enum class Quantity {
  kBytes, kSeconds, kNanoseconds, kRate, kFlop, kCount, kRatio, kFlag, kText, kUsd
};

std::string_view units_of(Quantity q);
ColumnType column_type_of(Quantity q);
/// Whether `name` follows the naming rule for a value of quantity `q` (table above).
bool name_fits(std::string_view name, Quantity q);
/// Whether a dataset `name` with `units` follows the rule: some quantity with these units and
/// this HDF5 type admits the name. Units the rule does not know ("B/s") never fit.
bool name_fits_units(std::string_view name, ColumnType type, std::string_view units);

/// A time in seconds that is not a whole number of nanoseconds (a mean, a run's span): it is
/// kept as the double it was computed as. A Duration gives the same quantity, kSeconds.
struct Seconds {
  double value = 0.0;
};
/// Events (requests, tokens) per second.
struct PerSecond {
  double value = 0.0;
};
/// A dimensionless ratio (MFU, a hit rate, a utilisation).
struct Ratio {
  double value = 0.0;
};
/// An amount of US dollars (a price, a cost); NaN where there is no price.
struct Usd {
  double value = 0.0;
};

/// The name and quantity of each field of a record, in order: what a record declares without
/// its values (the units of sweep's summary columns come from it).
using FieldSchema = std::vector<std::pair<std::string, Quantity>>;

/// The quantity `name` has in `schema`, or nullopt when the schema does not declare it.
std::optional<Quantity> quantity_in(const FieldSchema& schema, std::string_view name);

/// One row of typed fields. The quantity comes from the C++ type given to add(): Bytes ->
/// kBytes, Duration or Seconds -> kSeconds, PerSecond -> kRate, Flops -> kFlop, Ratio ->
/// kRatio, Usd -> kUsd, bool -> kFlag, any other integer -> kCount, a string -> kText. A plain double is
/// refused at compile time (it would not say what it is). Each name is checked against its
/// quantity (name_fits) and must be new; a mismatch is a programmer error.
class TypedRecord {
 public:
  using Value = std::variant<std::int64_t, double, std::string>;
  struct Field {
    std::string name;
    Quantity quantity = Quantity::kCount;
    Value value;
  };

  TypedRecord& add(std::string name, Bytes v);
  TypedRecord& add(std::string name, Duration v);
  TypedRecord& add(std::string name, Seconds v);
  TypedRecord& add(std::string name, PerSecond v);
  TypedRecord& add(std::string name, Flops v);
  TypedRecord& add(std::string name, Ratio v);
  TypedRecord& add(std::string name, Usd v);
  TypedRecord& add(std::string name, bool v);
  TypedRecord& add(std::string name, std::string v);
  TypedRecord& add(std::string name, const char* v) { return add(std::move(name), std::string(v)); }
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  TypedRecord& add(std::string name, T v) {
    return put(std::move(name), Quantity::kCount, static_cast<std::int64_t>(v));
  }
  template <std::floating_point T>
  TypedRecord& add(std::string name, T v) = delete;

  /// Appends `from`'s field `name` (which must exist) with its quantity and value.
  TypedRecord& copy(const TypedRecord& from, std::string_view name);
  /// The same fields with zero values ("" for text): the row of an option that did not run.
  TypedRecord zeroed() const;

  const std::vector<Field>& fields() const { return fields_; }
  FieldSchema schema() const;

  /// The fields as one JSON object, in order: integers and flags (as true/false) for the int64
  /// quantities, numbers for the float64 ones, strings for text.
  nlohmann::ordered_json to_json() const;
  /// The fields as a one-row table under `group`, each with its quantity's type and units.
  void write(ResultsWriter& writer, std::string_view group) const;
  /// Records of one schema as the rows of a table under `group` (at least one row).
  static void write_rows(ResultsWriter& writer, std::string_view group,
                         std::span<const TypedRecord> rows);

 private:
  TypedRecord& put(std::string name, Quantity q, Value v);
  std::vector<Field> fields_;
};

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
