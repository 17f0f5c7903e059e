// Internal to sim/io: RAII handles and helpers over the HDF5 C API, and the state of a streaming
// table. Only .cpp files in sim/io include this header: it pulls in hdf5.h, which the rest of
// the project never sees (HDF5 is linked privately into vramsim_lib).
#pragma once

#include "sim/io/results_types.hpp"

#include <hdf5.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace vramsim::io::detail {

/// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) {
    other.id_ = H5I_INVALID_HID;
  }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; false when HDF5 reported an error (for a file: data may not be on disk).
  bool close() {
    if (id_ < 0) return true;
    const herr_t status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  void reset() { (void)close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Turns off HDF5's automatic printing of error stacks while alive; failures are reported as
/// exceptions carrying error_stack_message() instead. Restores the previous handler.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

/// The descriptions on HDF5's current error stack, innermost first, joined by "; ".
std::string error_stack_message();

/// Throws std::runtime_error("<what>: <HDF5 error stack>").
[[noreturn]] void fail(std::string_view what);

/// Returns `id`, or fails with `what` when it is negative.
hid_t check_id(hid_t id, std::string_view what);
/// Fails with `what` when `status` is negative.
void check_status(herr_t status, std::string_view what);

/// "/a/b" for "a/b", "/a/b/" or "/a/b"; "/" for "" or "/". Components must be non-empty and
/// not "." or ".." (a programmer error otherwise).
std::string normalize_path(std::string_view path);
/// Whether the object at a normalized absolute path exists (every component checked).
bool path_exists(hid_t file, const std::string& path);

Handle utf8_vlen_string_type();
Handle utf8_fixed_string_type(std::size_t width);

/// Opens the group at `path`, creating it and any missing parents (times not tracked).
Handle open_or_create_group(hid_t file, const std::string& path);
/// Opens any existing object (group or dataset) at `path`; fails when it is missing.
Handle open_object(hid_t file, const std::string& path);

/// `s` as a C string; throws ConfigError(field = `what`) if it holds a NUL byte, which HDF5
/// strings cannot store.
std::string checked_c_string(std::string_view s, std::string_view what);

/// Write (replacing any previous value) a scalar attribute on an open object.
void write_string_attribute(hid_t object, std::string_view name, std::string_view value);
void write_int_attribute(hid_t object, std::string_view name, std::int64_t value);
void write_double_attribute(hid_t object, std::string_view name, double value);
/// A 1-D attribute of variable-length UTF-8 strings (h5py reads it as an array of str).
void write_string_list_attribute(hid_t object, std::string_view name,
                                 std::span<const std::string> values);

// ---- column datasets (column_datasets.cpp) ----

/// The HDF5 file type of a numeric column (little-endian int64 / IEEE double).
hid_t numeric_file_type(ColumnType type);

/// Creates 1-D dataset `name` under `group` with `rows` rows and a `units` attribute. An
/// extendible dataset (unlimited max size) is always chunked; a fixed-size one is chunked only
/// when it has at least options.compress_min_rows rows. Chunked datasets are shuffled and
/// deflate-compressed. `row_bytes` (the element size) caps the chunk at 4 MiB. No time stamps.
Handle create_column_dataset(hid_t group, const std::string& name, hid_t file_type,
                             std::int64_t rows, bool extendible, std::size_t row_bytes,
                             std::string_view units, const WriterOptions& options);

/// Write `values` into rows [offset, offset + size) of an existing 1-D dataset.
void write_rows(hid_t dataset, std::int64_t offset, std::span<const std::int64_t> values);
void write_rows(hid_t dataset, std::int64_t offset, std::span<const double> values);
/// For a variable-length string dataset.
void write_rows(hid_t dataset, std::int64_t offset, std::span<const std::string> values);

/// Creates dataset `column.name` under `group` holding all its values, with a `units` attribute.
/// `where` names the group in error messages.
void write_whole_column(hid_t group, const std::string& where, const Column& column,
                        const WriterOptions& options);
/// Checks a column's name, units and (for whole tables) length: programmer errors abort.
void check_column_shape(const std::string& name, ColumnType type, std::string_view units);

/// A streaming table: extendible chunked datasets plus per-column row buffers. Shared between
/// the ResultsWriter (which flushes it in finish()) and the TableWriter handle.
struct TableState {
  std::string group_path;
  std::vector<ColumnSpec> specs;
  std::vector<Handle> datasets;
  std::vector<std::variant<std::vector<std::int64_t>, std::vector<double>,
                           std::vector<std::string>>>
      buffers;
  std::int64_t buffer_rows = 0;   // rows buffered, not yet written
  std::int64_t written_rows = 0;  // rows already in the datasets
  std::int64_t flush_rows = 0;    // buffer size that triggers a write
  bool open = false;
};

// ---- streaming tables (table_writer.cpp) ----

/// Creates the group (with a `columns` attribute) and one empty extendible dataset per spec.
std::shared_ptr<TableState> open_table_state(hid_t file, const std::string& group_path,
                                             std::vector<ColumnSpec> specs,
                                             const WriterOptions& options);
/// Writes the buffered rows out and empties the buffers.
void flush_table_state(TableState& table);
/// Releases the datasets without writing; the table refuses further rows.
void close_table_state(TableState& table);

}  // namespace vramsim::io::detail
