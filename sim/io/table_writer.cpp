#include "sim/io/table_writer.hpp"

#include "sim/core/check.hpp"
#include "sim/io/hdf5_detail.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

namespace vramsim::io {

namespace detail {

std::shared_ptr<TableState> open_table_state(hid_t file, const std::string& group_path,
                                             std::vector<ColumnSpec> specs,
                                             const WriterOptions& options) {
  auto table = std::make_shared<TableState>();
  table->group_path = group_path;
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (const ColumnSpec& spec : specs) {
    check_column_shape(spec.name, spec.type, spec.units);
    VRAMSIM_CHECK(seen.insert(spec.name).second, "table '{}' has column '{}' twice", group_path,
                  spec.name);
    names.push_back(spec.name);
  }
  Handle group = open_or_create_group(file, group_path);
  for (const ColumnSpec& spec : specs) {
    VRAMSIM_CHECK(H5Lexists(group.get(), spec.name.c_str(), H5P_DEFAULT) <= 0,
                  "dataset '{}/{}' written twice", group_path, spec.name);
    switch (spec.type) {
      case ColumnType::kInt64:
      case ColumnType::kFloat64:
        table->datasets.push_back(create_column_dataset(group.get(), spec.name,
                                                        numeric_file_type(spec.type), 0, true, 8,
                                                        spec.units, options));
        if (spec.type == ColumnType::kInt64) {
          table->buffers.emplace_back(std::vector<std::int64_t>{});
        } else {
          table->buffers.emplace_back(std::vector<double>{});
        }
        break;
      case ColumnType::kString: {
        Handle type = utf8_vlen_string_type();
        table->datasets.push_back(create_column_dataset(group.get(), spec.name, type.get(), 0,
                                                        true, sizeof(hvl_t), spec.units,
                                                        options));
        table->buffers.emplace_back(std::vector<std::string>{});
        break;
      }
    }
  }
  write_string_list_attribute(group.get(), "columns", names);
  table->specs = std::move(specs);
  table->flush_rows = options.chunk_rows;
  table->open = true;
  return table;
}

void flush_table_state(TableState& table) {
  if (!table.open || table.buffer_rows == 0) return;
  const std::int64_t total = table.written_rows + table.buffer_rows;
  const hsize_t dims[1] = {static_cast<hsize_t>(total)};
  for (std::size_t i = 0; i < table.datasets.size(); ++i) {
    const hid_t ds = table.datasets[i].get();
    check_status(H5Dset_extent(ds, dims),
                 fmt::format("extend '{}/{}'", table.group_path, table.specs[i].name));
    std::visit(
        [&](auto& buffer) {
          using Value = typename std::decay_t<decltype(buffer)>::value_type;
          write_rows(ds, table.written_rows, std::span<const Value>(buffer));
          buffer.clear();
        },
        table.buffers[i]);
  }
  table.written_rows = total;
  table.buffer_rows = 0;
}

void close_table_state(TableState& table) {
  table.datasets.clear();
  table.buffers.clear();
  table.buffer_rows = 0;
  table.open = false;
}

}  // namespace detail

TableWriter::TableWriter(std::shared_ptr<detail::TableState> state) : state_(std::move(state)) {}
TableWriter::TableWriter(TableWriter&&) noexcept = default;
TableWriter& TableWriter::operator=(TableWriter&&) noexcept = default;
TableWriter::~TableWriter() = default;

namespace {

void check_open(const std::shared_ptr<detail::TableState>& state) {
  VRAMSIM_CHECK(state != nullptr, "use of a moved-from TableWriter");
  VRAMSIM_CHECK(state->open, "table '{}' used after its ResultsWriter finished or was destroyed",
                state->group_path);
}

}  // namespace

void TableWriter::append_row(std::span<const Cell> row) {
  check_open(state_);
  detail::TableState& t = *state_;
  VRAMSIM_CHECK(row.size() == t.specs.size(), "table '{}' has {} columns, row has {} cells",
                t.group_path, t.specs.size(), row.size());
  for (std::size_t i = 0; i < row.size(); ++i) {
    VRAMSIM_CHECK(row[i].type() == t.specs[i].type, "table '{}': column '{}' is {}, cell is {}",
                  t.group_path, t.specs[i].name, to_string(t.specs[i].type),
                  to_string(row[i].type()));
    if (const auto* s = std::get_if<std::string>(&row[i].value())) {
      (void)detail::checked_c_string(*s, fmt::format("{}/{}", t.group_path, t.specs[i].name));
    }
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    std::visit(
        [&](auto& buffer) {
          using Value = typename std::decay_t<decltype(buffer)>::value_type;
          buffer.push_back(std::get<Value>(row[i].value()));
        },
        t.buffers[i]);
  }
  ++t.buffer_rows;
  if (t.buffer_rows >= t.flush_rows) flush();
}

void TableWriter::append(std::span<const Column> batch) {
  check_open(state_);
  detail::TableState& t = *state_;
  VRAMSIM_CHECK(batch.size() == t.specs.size(), "table '{}' has {} columns, batch has {}",
                t.group_path, t.specs.size(), batch.size());
  if (batch.empty()) return;
  const std::size_t rows = batch.front().size();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Column& c = batch[i];
    VRAMSIM_CHECK(c.name == t.specs[i].name && c.type() == t.specs[i].type,
                  "table '{}': column {} is '{}' ({}), batch gives '{}' ({})", t.group_path, i,
                  t.specs[i].name, to_string(t.specs[i].type), c.name, to_string(c.type()));
    VRAMSIM_CHECK(c.size() == rows, "table '{}': batch column '{}' has {} rows, '{}' has {}",
                  t.group_path, c.name, c.size(), batch.front().name, rows);
    if (const auto* strings = std::get_if<std::span<const std::string>>(&c.values)) {
      for (const std::string& s : *strings) {
        (void)detail::checked_c_string(s, fmt::format("{}/{}", t.group_path, c.name));
      }
    }
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::visit(
        [&](auto& buffer) {
          using Value = typename std::decay_t<decltype(buffer)>::value_type;
          const auto values = std::get<std::span<const Value>>(batch[i].values);
          buffer.insert(buffer.end(), values.begin(), values.end());
        },
        t.buffers[i]);
  }
  t.buffer_rows += static_cast<std::int64_t>(rows);
  if (t.buffer_rows >= t.flush_rows) flush();
}

void TableWriter::flush() {
  check_open(state_);
  detail::QuietErrors quiet;
  detail::flush_table_state(*state_);
}

std::int64_t TableWriter::num_rows() const {
  VRAMSIM_CHECK(state_ != nullptr, "use of a moved-from TableWriter");
  return state_->written_rows + state_->buffer_rows;
}

const std::vector<ColumnSpec>& TableWriter::columns() const {
  VRAMSIM_CHECK(state_ != nullptr, "use of a moved-from TableWriter");
  return state_->specs;
}

}  // namespace vramsim::io
