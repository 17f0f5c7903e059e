#include "sim/io/typed_columns.hpp"

#include "sim/core/check.hpp"

namespace vramsim::io {
namespace {

constexpr std::string_view kBytesSuffix = "_bytes";
constexpr std::string_view kFlopsSuffix = "_flops";

bool ends_in(std::string_view name, std::string_view suffix) {
  return name.size() > suffix.size() && name.ends_with(suffix);
}

// `<what>_<unit>` or `<what>_<unit>_per_<item>` (kv_bytes_per_token, model_flops_per_step).
bool ends_in_unit(std::string_view name, std::string_view unit) {
  if (ends_in(name, unit)) return true;
  const std::size_t at = name.rfind(std::string(unit) + "_per_");
  return at != std::string_view::npos && at > 0 &&
         at + unit.size() + 5 < name.size() && !name.ends_with("_per_s");
}

bool has_unit_suffix(std::string_view name) {
  return ends_in_unit(name, kBytesSuffix) || ends_in_unit(name, kFlopsSuffix) ||
         ends_in(name, "_s") || ends_in(name, "_ns");
}

void check_name(const std::string& name, Quantity q) {
  VRAMSIM_CHECK(name_fits(name, q),
                "'{}' holds '{}' values: its name breaks the naming rule (analysis/SCHEMA.md)",
                name, units_of(q));
}

}  // namespace

std::string_view units_of(Quantity q) {
  switch (q) {
    case Quantity::kBytes: return kUnitsBytes;
    case Quantity::kSeconds: return kUnitsSeconds;
    case Quantity::kNanoseconds: return kUnitsNanoseconds;
    case Quantity::kRate: return kUnitsPerSecond;
    case Quantity::kFlop: return kUnitsFlop;
    case Quantity::kCount:
    case Quantity::kRatio:
    case Quantity::kFlag: return kUnitsCount;
    case Quantity::kText: return kUnitsNone;
    case Quantity::kUsd: return "USD";
  }
  VRAMSIM_UNREACHABLE("invalid Quantity");
}

ColumnType column_type_of(Quantity q) {
  switch (q) {
    case Quantity::kBytes:
    case Quantity::kNanoseconds:
    case Quantity::kCount:
    case Quantity::kFlag: return ColumnType::kInt64;
    case Quantity::kSeconds:
    case Quantity::kRate:
    case Quantity::kFlop:
    case Quantity::kRatio:
    case Quantity::kUsd: return ColumnType::kFloat64;
    case Quantity::kText: return ColumnType::kString;
  }
  VRAMSIM_UNREACHABLE("invalid Quantity");
}

bool name_fits(std::string_view name, Quantity q) {
  switch (q) {
    case Quantity::kBytes: return ends_in_unit(name, kBytesSuffix);
    case Quantity::kSeconds: return ends_in(name, "_s") && !name.ends_with("_per_s");
    case Quantity::kNanoseconds: return ends_in(name, "_ns");
    case Quantity::kRate: return ends_in(name, "_per_s");
    case Quantity::kFlop: return ends_in_unit(name, kFlopsSuffix);
    case Quantity::kCount:
    case Quantity::kRatio:
    case Quantity::kFlag: return !name.empty() && !has_unit_suffix(name);
    case Quantity::kText: return !name.empty();
    case Quantity::kUsd:
      return (name.starts_with("usd_") || name.find("_usd") != std::string_view::npos) &&
             !has_unit_suffix(name) && !name.ends_with("_per_s");
  }
  VRAMSIM_UNREACHABLE("invalid Quantity");
}

bool name_fits_units(std::string_view name, ColumnType type, std::string_view units) {
  for (const Quantity q : {Quantity::kBytes, Quantity::kSeconds, Quantity::kNanoseconds,
                           Quantity::kRate, Quantity::kFlop, Quantity::kCount, Quantity::kRatio,
                           Quantity::kFlag, Quantity::kText, Quantity::kUsd}) {
    // An integer column of a float quantity is fine (a count written as float is not).
    const bool type_ok = column_type_of(q) == type ||
                         (type == ColumnType::kInt64 && column_type_of(q) == ColumnType::kFloat64);
    if (units_of(q) == units && type_ok && name_fits(name, q)) return true;
  }
  return false;
}

std::optional<Quantity> quantity_in(const FieldSchema& schema, std::string_view name) {
  for (const auto& [n, q] : schema) {
    if (n == name) return q;
  }
  return std::nullopt;
}

TypedRecord& TypedRecord::add(std::string name, Usd v) {
  return put(std::move(name), Quantity::kUsd, v.value);
}
TypedRecord& TypedRecord::add(std::string name, Bytes v) {
  return put(std::move(name), Quantity::kBytes, v.count());
}
TypedRecord& TypedRecord::add(std::string name, Duration v) {
  return put(std::move(name), Quantity::kSeconds, v.seconds());
}
TypedRecord& TypedRecord::add(std::string name, Seconds v) {
  return put(std::move(name), Quantity::kSeconds, v.value);
}
TypedRecord& TypedRecord::add(std::string name, PerSecond v) {
  return put(std::move(name), Quantity::kRate, v.value);
}
TypedRecord& TypedRecord::add(std::string name, Flops v) {
  return put(std::move(name), Quantity::kFlop, v.count());
}
TypedRecord& TypedRecord::add(std::string name, Ratio v) {
  return put(std::move(name), Quantity::kRatio, v.value);
}
TypedRecord& TypedRecord::add(std::string name, bool v) {
  return put(std::move(name), Quantity::kFlag, std::int64_t{v ? 1 : 0});
}
TypedRecord& TypedRecord::add(std::string name, std::string v) {
  return put(std::move(name), Quantity::kText, std::move(v));
}

TypedRecord& TypedRecord::put(std::string name, Quantity q, Value v) {
  check_name(name, q);
  VRAMSIM_CHECK(!quantity_in(schema(), name), "field '{}' added twice", name);
  fields_.push_back(Field{std::move(name), q, std::move(v)});
  return *this;
}

TypedRecord& TypedRecord::copy(const TypedRecord& from, std::string_view name) {
  for (const Field& f : from.fields_) {
    if (f.name == name) return put(f.name, f.quantity, f.value);
  }
  VRAMSIM_CHECK(false, "TypedRecord::copy: no field '{}'", name);
  return *this;
}

TypedRecord TypedRecord::zeroed() const {
  TypedRecord r = *this;
  for (Field& f : r.fields_) {
    std::visit([](auto& v) { v = std::decay_t<decltype(v)>{}; }, f.value);
  }
  return r;
}

void TypedRecord::write_rows(ResultsWriter& writer, std::string_view group,
                             std::span<const TypedRecord> rows) {
  VRAMSIM_CHECK(!rows.empty(), "TypedRecord::write_rows of no rows to {}", group);
  const FieldSchema schema = rows.front().schema();
  std::deque<std::vector<std::int64_t>> ints;
  std::deque<std::vector<double>> doubles;
  std::deque<std::vector<std::string>> strings;
  std::vector<Column> columns;
  for (std::size_t k = 0; k < schema.size(); ++k) {
    const auto& [name, q] = schema[k];
    const std::string_view units = units_of(q);
    for (const TypedRecord& r : rows) {
      VRAMSIM_CHECK(r.fields_.size() == schema.size() && r.fields_[k].name == name &&
                        r.fields_[k].quantity == q,
                    "TypedRecord::write_rows to {}: rows of different schemas", group);
    }
    switch (column_type_of(q)) {
      case ColumnType::kInt64: {
        std::vector<std::int64_t>& v = ints.emplace_back();
        for (const TypedRecord& r : rows) v.push_back(std::get<std::int64_t>(r.fields_[k].value));
        columns.push_back(Column::int64(name, units, v));
        break;
      }
      case ColumnType::kFloat64: {
        std::vector<double>& v = doubles.emplace_back();
        for (const TypedRecord& r : rows) v.push_back(std::get<double>(r.fields_[k].value));
        columns.push_back(Column::float64(name, units, v));
        break;
      }
      case ColumnType::kString: {
        std::vector<std::string>& v = strings.emplace_back();
        for (const TypedRecord& r : rows) v.push_back(std::get<std::string>(r.fields_[k].value));
        columns.push_back(Column::string(name, v));
        break;
      }
    }
  }
  writer.write_table(group, std::span<const Column>(columns));
}

FieldSchema TypedRecord::schema() const {
  FieldSchema s;
  s.reserve(fields_.size());
  for (const Field& f : fields_) s.emplace_back(f.name, f.quantity);
  return s;
}

nlohmann::ordered_json TypedRecord::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Field& f : fields_) {
    if (f.quantity == Quantity::kFlag) {
      j[f.name] = std::get<std::int64_t>(f.value) != 0;
    } else {
      std::visit([&](const auto& v) { j[f.name] = v; }, f.value);
    }
  }
  return j;
}

void TypedRecord::write(ResultsWriter& writer, std::string_view group) const {
  std::vector<Column> columns;
  columns.reserve(fields_.size());
  for (const Field& f : fields_) {
    const std::string_view units = units_of(f.quantity);
    if (const auto* i = std::get_if<std::int64_t>(&f.value)) {
      columns.push_back(Column::int64(f.name, units, std::span<const std::int64_t>(i, 1)));
    } else if (const auto* d = std::get_if<double>(&f.value)) {
      columns.push_back(Column::float64(f.name, units, std::span<const double>(d, 1)));
    } else {
      columns.push_back(
          Column::string(f.name, std::span<const std::string>(&std::get<std::string>(f.value), 1)));
    }
  }
  VRAMSIM_CHECK(!columns.empty(), "TypedRecord::write of an empty record to {}", group);
  writer.write_table(group, std::span<const Column>(columns));
}

TypedTable& TypedTable::bytes(std::string name, std::span<const Bytes> values) {
  check_name(name, Quantity::kBytes);
  std::vector<std::int64_t>& v = ints_.emplace_back();
  v.reserve(values.size());
  for (const Bytes b : values) v.push_back(b.count());
  add(Column::int64(std::move(name), kUnitsBytes, v));
  return *this;
}

TypedTable& TypedTable::seconds(std::string name, std::span<const Duration> values) {
  check_name(name, Quantity::kSeconds);
  std::vector<double>& v = doubles_.emplace_back();
  v.reserve(values.size());
  for (const Duration d : values) v.push_back(d.seconds());
  add(Column::float64(std::move(name), kUnitsSeconds, v));
  return *this;
}

TypedTable& TypedTable::nanoseconds(std::string name, std::span<const Duration> values) {
  check_name(name, Quantity::kNanoseconds);
  std::vector<std::int64_t>& v = ints_.emplace_back();
  v.reserve(values.size());
  for (const Duration d : values) v.push_back(d.nanoseconds());
  add(Column::int64(std::move(name), kUnitsNanoseconds, v));
  return *this;
}

TypedTable& TypedTable::rate(std::string name, std::span<const double> per_second) {
  check_name(name, Quantity::kRate);
  add(Column::float64(std::move(name), kUnitsPerSecond,
                      doubles_.emplace_back(per_second.begin(), per_second.end())));
  return *this;
}

TypedTable& TypedTable::count(std::string name, std::span<const std::int64_t> values) {
  check_name(name, Quantity::kCount);
  add(Column::int64(std::move(name), kUnitsCount,
                    ints_.emplace_back(values.begin(), values.end())));
  return *this;
}

TypedTable& TypedTable::ratio(std::string name, std::span<const double> values) {
  check_name(name, Quantity::kRatio);
  add(Column::float64(std::move(name), kUnitsCount,
                      doubles_.emplace_back(values.begin(), values.end())));
  return *this;
}

TypedTable& TypedTable::flag(std::string name, const std::vector<bool>& values) {
  check_name(name, Quantity::kFlag);
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
