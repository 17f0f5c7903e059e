#include "sim/io/typed_columns.hpp"

#include "sim/core/check.hpp"

namespace vramsim::io {
namespace {

void check_suffix(const std::string& name, std::string_view suffix) {
  VRAMSIM_CHECK(name.size() > suffix.size() && name.ends_with(suffix),
                "column '{}' holds '{}' values: its name must end in '{}'", name, suffix, suffix);
}

}  // namespace

TypedTable& TypedTable::bytes(std::string name, std::span<const Bytes> values) {
  check_suffix(name, "_bytes");
  std::vector<std::int64_t>& v = ints_.emplace_back();
  v.reserve(values.size());
  for (const Bytes b : values) v.push_back(b.count());
  add(Column::int64(std::move(name), kUnitsBytes, v));
  return *this;
}

TypedTable& TypedTable::seconds(std::string name, std::span<const Duration> values) {
  check_suffix(name, "_s");
  std::vector<double>& v = doubles_.emplace_back();
  v.reserve(values.size());
  for (const Duration d : values) v.push_back(d.seconds());
  add(Column::float64(std::move(name), kUnitsSeconds, v));
  return *this;
}

TypedTable& TypedTable::nanoseconds(std::string name, std::span<const Duration> values) {
  check_suffix(name, "_ns");
  std::vector<std::int64_t>& v = ints_.emplace_back();
  v.reserve(values.size());
  for (const Duration d : values) v.push_back(d.nanoseconds());
  add(Column::int64(std::move(name), kUnitsNanoseconds, v));
  return *this;
}

TypedTable& TypedTable::rate(std::string name, std::span<const double> per_second) {
  check_suffix(name, "_per_s");
  add(Column::float64(std::move(name), kUnitsPerSecond,
                      doubles_.emplace_back(per_second.begin(), per_second.end())));
  return *this;
}

TypedTable& TypedTable::count(std::string name, std::span<const std::int64_t> values) {
  add(Column::int64(std::move(name), kUnitsCount,
                    ints_.emplace_back(values.begin(), values.end())));
  return *this;
}

TypedTable& TypedTable::ratio(std::string name, std::span<const double> values) {
  add(Column::float64(std::move(name), kUnitsCount,
                      doubles_.emplace_back(values.begin(), values.end())));
  return *this;
}

TypedTable& TypedTable::flag(std::string name, const std::vector<bool>& values) {
  std::vector<std::int64_t>& v = ints_.emplace_back();
  v.reserve(values.size());
  for (const bool b : values) v.push_back(b ? 1 : 0);
  add(Column::int64(std::move(name), kUnitsCount, v));
  return *this;
}

TypedTable& TypedTable::text(std::string name, std::span<const std::string> values) {
  add(Column::string(std::move(name), strings_.emplace_back(values.begin(), values.end())));
  return *this;
}

std::size_t TypedTable::num_rows() const {
  return columns_.empty() ? 0 : columns_.front().size();
}

void TypedTable::write(ResultsWriter& writer, std::string_view group) const {
  VRAMSIM_CHECK(!columns_.empty(), "TypedTable::write of an empty table to {}", group);
  writer.write_table(group, std::span<const Column>(columns_));
}

void TypedTable::add(Column column) {
  VRAMSIM_CHECK(columns_.empty() || column.size() == columns_.front().size(),
                "column '{}' has {} rows, the table {}", column.name, column.size(),
                columns_.front().size());
  columns_.push_back(std::move(column));
}

}  // namespace vramsim::io
