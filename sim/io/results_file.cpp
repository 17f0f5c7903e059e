#include "sim/io/results_file.hpp"

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/io/hdf5_detail.hpp"
#include "sim/io/output_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <system_error>

#ifndef VRAMSIM_VERSION
#define VRAMSIM_VERSION "unknown"
#endif

namespace vramsim::io {

namespace fs = std::filesystem;
using detail::Handle;

std::string_view to_string(ColumnType type) { return name_of(kColumnTypes, type); }

std::string_view vramsim_version() { return VRAMSIM_VERSION; }

namespace {

[[noreturn]] void out_error(std::string message) {
  throw ConfigError("--out", std::move(message));
}

/// The reason of an HDF5 write failure in one line: the system's message HDF5 quotes ("File
/// too large", "No space left on device") where it has one, else its whole error stack.
std::string write_failure(const std::string& stack) {
  const std::string key = "error message = '";
  const std::size_t at = stack.find(key);
  if (at != std::string::npos) {
    const std::size_t end = stack.find('\'', at + key.size());
    if (end != std::string::npos) {
      return stack.substr(at + key.size(), end - at - key.size()) +
             " (a full disk or a file size limit?)";
    }
  }
  std::string line = stack;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

}  // namespace

struct ResultsWriter::Impl {
  fs::path final_path;
  fs::path target_path;  // final_path, or a symlink's target (written through)
  fs::path temp_path;
  WriterOptions options;
  Handle file;
  std::vector<std::shared_ptr<detail::TableState>> tables;
  bool finished = false;

  void check_writable() const {
    VRAMSIM_CHECK(!finished, "results file '{}' written after finish()", final_path.string());
  }
  Handle group(std::string_view path) {
    return detail::open_or_create_group(file.get(), detail::normalize_path(path));
  }
  Handle object(std::string_view path) {
    const std::string p = detail::normalize_path(path);
    if (!detail::path_exists(file.get(), p)) return detail::open_or_create_group(file.get(), p);
    return detail::open_object(file.get(), p);
  }
};

ResultsWriter::ResultsWriter(fs::path final_path, WriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  detail::QuietErrors quiet;
  impl_->final_path = std::move(final_path);
  impl_->options = options;
  const fs::path& final_p = impl_->final_path;
  const OutputPaths paths = prepare_output(final_p, "--out", "results file");
  impl_->target_path = paths.target_path;
  impl_->temp_path = paths.temp_path;
  std::error_code ec;

  Handle fcpl(detail::check_id(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate"), H5Pclose);
  // NOTE: the root group is created with the file; no time stamps there either.
  detail::check_status(H5Pset_obj_track_times(fcpl.get(), false), "H5Pset_obj_track_times");
  Handle fapl(detail::check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
  detail::check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG),
                       "H5Pset_fclose_degree");
  const hid_t id = H5Fcreate(impl_->temp_path.c_str(), H5F_ACC_EXCL, fcpl.get(), fapl.get());
  if (id < 0) {
    const std::string why = write_failure(detail::error_stack_message());
    // H5Fcreate may have created the file before failing (a full disk): the name was free
    // (prepare_output), so what is there now is ours.
    fs::remove(impl_->temp_path, ec);
    out_error(fmt::format("cannot create results file '{}' (temporary '{}'): {}",
                          final_p.string(), impl_->temp_path.string(), why));
  }
  impl_->file = Handle(id, H5Fclose);
  try {
    Handle root = impl_->group("/");
    detail::write_int_attribute(root.get(), "schema_version", kSchemaVersion);
  } catch (...) {
    // NOTE: the destructor does not run for a throwing constructor; clean up here.
    impl_->file.reset();
    fs::remove(impl_->temp_path, ec);
    throw;
  }
}

ResultsWriter::~ResultsWriter() {
  if (!impl_ || impl_->finished) return;
  detail::QuietErrors quiet;
  for (const auto& table : impl_->tables) detail::close_table_state(*table);
  impl_->file.reset();
  std::error_code ec;
  fs::remove(impl_->temp_path, ec);  // best effort: nothing useful to do on failure here
}

ResultsWriter::ResultsWriter(ResultsWriter&&) noexcept = default;

ResultsWriter& ResultsWriter::operator=(ResultsWriter&& other) noexcept {
  if (this != &other) {
    ResultsWriter discard(std::move(*this));  // cleans up what this writer held
    impl_ = std::move(other.impl_);
  }
  return *this;
}

void ResultsWriter::write_run_metadata(const RunMetadata& meta) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  Handle root = impl_->group("/");
  const hid_t r = root.get();
  const std::string_view version =
      meta.vramsim_version.empty() ? vramsim_version() : std::string_view(meta.vramsim_version);
  detail::write_string_attribute(r, "vramsim_version", version);
  detail::write_string_attribute(r, "command", meta.command);
  detail::write_string_attribute(r, "scenario_text", meta.scenario_text);
  detail::write_int_attribute(r, "seed", meta.seed);
  detail::write_string_attribute(r, "inputs", meta.inputs);
  detail::write_string_attribute(r, "calibration_source", meta.calibration_source);
  detail::write_string_attribute(r, "created_by", meta.created_by);
}

void ResultsWriter::create_group(std::string_view path) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  (void)impl_->group(path);
}

void ResultsWriter::set_string_attribute(std::string_view object_path, std::string_view name,
                                         std::string_view value) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  Handle obj = impl_->object(object_path);
  detail::write_string_attribute(obj.get(), name, value);
}

void ResultsWriter::set_int_attribute(std::string_view object_path, std::string_view name,
                                      std::int64_t value) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  Handle obj = impl_->object(object_path);
  detail::write_int_attribute(obj.get(), name, value);
}

void ResultsWriter::set_double_attribute(std::string_view object_path, std::string_view name,
                                         double value) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  Handle obj = impl_->object(object_path);
  detail::write_double_attribute(obj.get(), name, value);
}

void ResultsWriter::write_column(std::string_view group, const Column& column) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  Handle g = impl_->group(group);
  detail::write_whole_column(g.get(), detail::normalize_path(group), column, impl_->options);
}

void ResultsWriter::write_table(std::string_view group, std::span<const Column> columns) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  const std::string where = detail::normalize_path(group);
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (const Column& c : columns) {
    VRAMSIM_CHECK(seen.insert(c.name).second, "table '{}' has column '{}' twice", where, c.name);
    VRAMSIM_CHECK(c.size() == columns.front().size(),
                  "table '{}': column '{}' has {} rows, column '{}' has {}", where, c.name,
                  c.size(), columns.front().name, columns.front().size());
    names.push_back(c.name);
  }
  detail::QuietErrors quiet;
  Handle g = impl_->group(where);
  for (const Column& c : columns) detail::write_whole_column(g.get(), where, c, impl_->options);
  detail::write_string_list_attribute(g.get(), "columns", names);
}

TableWriter ResultsWriter::open_table(std::string_view group, std::vector<ColumnSpec> columns) {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  auto state = detail::open_table_state(impl_->file.get(), detail::normalize_path(group),
                                        std::move(columns), impl_->options);
  impl_->tables.push_back(state);
  return TableWriter(std::move(state));
}

void ResultsWriter::finish() {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  impl_->check_writable();
  detail::QuietErrors quiet;
  const std::string final_name = impl_->final_path.string();
  try {
    for (const auto& table : impl_->tables) detail::flush_table_state(*table);
  } catch (const std::runtime_error& e) {
    out_error(fmt::format("cannot write results file '{}': {}", final_name,
                          write_failure(e.what())));
  }
  for (const auto& table : impl_->tables) detail::close_table_state(*table);
  impl_->tables.clear();
  if (!impl_->file.close()) {
    out_error(fmt::format("cannot close results file '{}' (temporary '{}', removed): {}",
                          final_name, impl_->temp_path.string(),
                          write_failure(detail::error_stack_message())));
  }
  commit_output({impl_->final_path, impl_->target_path, impl_->temp_path}, "--out",
                "results file");
  impl_->finished = true;
}

bool ResultsWriter::finished() const { return impl_ && impl_->finished; }

const fs::path& ResultsWriter::final_path() const {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  return impl_->final_path;
}

const fs::path& ResultsWriter::temp_path() const {
  VRAMSIM_CHECK(impl_, "use of a moved-from ResultsWriter");
  return impl_->temp_path;
}

}  // namespace vramsim::io
