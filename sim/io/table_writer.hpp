// TableWriter: a table whose rows arrive over time (one finished request at a time, one
// timeseries sample at a time), written to extendible, chunked, compressed datasets.
//
// Rows are buffered per column and written out every WriterOptions::chunk_rows rows, so memory
// stays bounded however long the run. A TableWriter is obtained from ResultsWriter::open_table;
// ResultsWriter::finish() flushes every table still open, so rows are never lost by dropping
// the handle. Using a TableWriter after its ResultsWriter finished or was destroyed is a
// programmer error (VRAMSIM_CHECK).
//
//   TableWriter t = out.open_table("/requests", {{"request_id", ColumnType::kInt64, "1"},
//                                                {"ttft", ColumnType::kInt64, "ns"}});
//   t.append_row({7, 1'250'000});
//   t.append({Column::int64("request_id", "1", ids), Column::int64("ttft", "ns", ttfts)});
#pragma once

#include "sim/io/results_types.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace vramsim::io {

namespace detail {
struct TableState;
}  // namespace detail

class TableWriter {
 public:
  TableWriter(TableWriter&&) noexcept;
  TableWriter& operator=(TableWriter&&) noexcept;
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;
  /// Does not write: the owning ResultsWriter flushes buffered rows in finish().
  ~TableWriter();

  /// Appends one row. The cells match the table's columns by position and type (an int64
  /// column takes an integral cell, a double column a floating-point one); a mismatch is a
  /// programmer error. Strings containing NUL throw ConfigError.
  void append_row(std::span<const Cell> row);
  void append_row(std::initializer_list<Cell> row) {
    append_row(std::span<const Cell>(row.begin(), row.size()));
  }

  /// Appends a batch of rows given as columns: same names, types and order as the table, all of
  /// the same length (programmer errors otherwise). Units in the batch are not consulted.
  void append(std::span<const Column> batch);
  void append(std::initializer_list<Column> batch) {
    append(std::span<const Column>(batch.begin(), batch.size()));
  }

  /// Writes buffered rows to the file now (they stay in the temporary file until finish()).
  void flush();

  /// Rows appended so far, buffered ones included.
  std::int64_t num_rows() const;
  const std::vector<ColumnSpec>& columns() const;

 private:
  friend class ResultsWriter;
  explicit TableWriter(std::shared_ptr<detail::TableState> state);
  std::shared_ptr<detail::TableState> state_;
};

}  // namespace vramsim::io
