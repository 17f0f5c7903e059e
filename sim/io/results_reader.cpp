#include "sim/io/results_reader.hpp"

#include "sim/core/error.hpp"
#include "sim/io/hdf5_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>

namespace vramsim::io {

namespace fs = std::filesystem;
using detail::Handle;

namespace {

/// Reads every element of a string attribute or dataset (`file_type` over `space`) through
/// `read(mem_type, buffer)`.
template <typename ReadFn>
std::vector<std::string> read_strings(hid_t file_type, hid_t space, ReadFn read) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  detail::check_status(n < 0 ? -1 : 0, "H5Sget_simple_extent_npoints");
  const auto count = static_cast<std::size_t>(n);
  std::vector<std::string> out;
  out.reserve(count);
  if (count == 0) return out;
  if (H5Tis_variable_str(file_type) > 0) {
    Handle mem(detail::check_id(H5Tcopy(file_type), "H5Tcopy"), H5Tclose);
    std::vector<char*> ptrs(count, nullptr);
    detail::check_status(read(mem.get(), ptrs.data()), "read strings");
    for (char* p : ptrs) out.emplace_back(p == nullptr ? "" : p);
#if H5_VERSION_GE(1, 12, 0)
    (void)H5Treclaim(mem.get(), space, H5P_DEFAULT, ptrs.data());
#else
    (void)H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, ptrs.data());
#endif
    return out;
  }
  const std::size_t width = H5Tget_size(file_type);
  Handle mem(detail::check_id(H5Tcopy(file_type), "H5Tcopy"), H5Tclose);
  std::vector<char> buffer(count * width, '\0');
  detail::check_status(read(mem.get(), buffer.data()), "read strings");
  const bool space_pad = H5Tget_strpad(file_type) == H5T_STR_SPACEPAD;
  for (std::size_t i = 0; i < count; ++i) {
    std::string s(buffer.data() + i * width, width);
    if (space_pad) {
      s.erase(s.find_last_not_of(' ') + 1);
    } else {
      s.erase(std::min(s.find('\0'), s.size()));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

struct ResultsReader::Impl {
  fs::path path;
  Handle file;

  [[noreturn]] void error(const std::string& field, const std::string& message) const {
    throw ConfigError(field, message, SourceLocation{path.string(), 0});
  }

  Handle object(std::string_view p) const {
    const std::string n = detail::normalize_path(p);
    if (!detail::path_exists(file.get(), n)) error(n, "no such group or dataset");
    const hid_t id = H5Oopen(file.get(), n.c_str(), H5P_DEFAULT);
    if (id < 0) error(n, fmt::format("cannot open: {}", detail::error_stack_message()));
    return Handle(id, H5Oclose);
  }

  Handle dataset(std::string_view p) const {
    Handle obj = object(p);
    if (H5Iget_type(obj.get()) != H5I_DATASET) error(detail::normalize_path(p), "not a dataset");
    Handle space(detail::check_id(H5Dget_space(obj.get()), "H5Dget_space"), H5Sclose);
    if (H5Sget_simple_extent_ndims(space.get()) != 1) {
      error(detail::normalize_path(p), "not a 1-D column");
    }
    return obj;
  }

  Handle attribute(std::string_view p, std::string_view name) const {
    Handle obj = object(p);
    const std::string n(name);
    const std::string field = fmt::format("{}@{}", detail::normalize_path(p), n);
    if (H5Aexists(obj.get(), n.c_str()) <= 0) error(field, "no such attribute");
    return Handle(detail::check_id(H5Aopen(obj.get(), n.c_str(), H5P_DEFAULT), field), H5Aclose);
  }

  std::vector<std::string> children(std::string_view group, H5I_type_t kind) const {
    Handle g = object(group);
    const std::string n = detail::normalize_path(group);
    if (H5Iget_type(g.get()) != H5I_GROUP) error(n, "not a group");
    H5G_info_t info;
    detail::check_status(H5Gget_info(g.get(), &info), "H5Gget_info");
    std::vector<std::string> out;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const ssize_t len = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr,
                                             0, H5P_DEFAULT);
      detail::check_status(len < 0 ? -1 : 0, "H5Lget_name_by_idx");
      std::string name(static_cast<std::size_t>(len) + 1, '\0');
      (void)H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                               name.size(), H5P_DEFAULT);
      name.resize(static_cast<std::size_t>(len));
      Handle child(detail::check_id(H5Oopen(g.get(), name.c_str(), H5P_DEFAULT), name),
                   H5Oclose);
      if (H5Iget_type(child.get()) == kind) out.push_back(std::move(name));
    }
    return out;
  }

  H5T_class_t attribute_class(hid_t attr) const {
    Handle type(detail::check_id(H5Aget_type(attr), "H5Aget_type"), H5Tclose);
    return H5Tget_class(type.get());
  }

  void require_scalar(hid_t attr, const std::string& field) const {
    Handle space(detail::check_id(H5Aget_space(attr), "H5Aget_space"), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) error(field, "not a single value");
  }
};

ResultsReader::ResultsReader(const fs::path& path) : impl_(std::make_unique<Impl>()) {
  detail::QuietErrors quiet;
  impl_->path = path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw ConfigError("results", fmt::format("cannot open results file '{}': no such file",
                                             path.string()));
  }
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    throw ConfigError("results",
                      fmt::format("cannot open results file '{}' (not an HDF5 file?): {}",
                                  path.string(), detail::error_stack_message()));
  }
  impl_->file = Handle(id, H5Fclose);
}

ResultsReader::~ResultsReader() = default;
ResultsReader::ResultsReader(ResultsReader&&) noexcept = default;
ResultsReader& ResultsReader::operator=(ResultsReader&&) noexcept = default;

const fs::path& ResultsReader::path() const { return impl_->path; }

std::int64_t ResultsReader::schema_version() const {
  return read_int_attribute("/", "schema_version");
}

void ResultsReader::require_current_schema() const {
  const std::int64_t v = schema_version();
  if (v == kSchemaVersion) return;
  const std::string what =
      v < kSchemaVersion
          ? fmt::format("was written by an older vramsim (schema_version {}; this one reads {}: "
                        "since 2, serve's time columns carry their unit, `arrival_ns` for "
                        "`arrival`; analysis/SCHEMA.md, \"Versions\"); rerun the command, or read "
                        "it with analysis/vramsim_results.py, which reads both",
                        v, kSchemaVersion)
          : fmt::format("was written by a newer vramsim (schema_version {}; this one reads {})",
                        v, kSchemaVersion);
  throw ConfigError("results", fmt::format("results file '{}' {}", impl_->path.string(), what),
                    SourceLocation{impl_->path.string(), 0});
}

bool ResultsReader::has_object(std::string_view path) const {
  detail::QuietErrors quiet;
  return detail::path_exists(impl_->file.get(), detail::normalize_path(path));
}

std::vector<std::string> ResultsReader::list_groups(std::string_view group) const {
  detail::QuietErrors quiet;
  return impl_->children(group, H5I_GROUP);
}

std::vector<std::string> ResultsReader::list_datasets(std::string_view group) const {
  detail::QuietErrors quiet;
  return impl_->children(group, H5I_DATASET);
}

namespace {
herr_t collect_attribute_name(hid_t /*loc*/, const char* name, const H5A_info_t* /*info*/,
                              void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> ResultsReader::list_attributes(std::string_view path) const {
  detail::QuietErrors quiet;
  Handle obj = impl_->object(path);
  std::vector<std::string> names;
  detail::check_status(H5Aiterate2(obj.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
                                   collect_attribute_name, &names),
                       "H5Aiterate2");
  return names;
}

bool ResultsReader::has_attribute(std::string_view path, std::string_view name) const {
  detail::QuietErrors quiet;
  Handle obj = impl_->object(path);
  return H5Aexists(obj.get(), std::string(name).c_str()) > 0;
}

std::string ResultsReader::read_string_attribute(std::string_view path,
                                                 std::string_view name) const {
  detail::QuietErrors quiet;
  const std::string field = fmt::format("{}@{}", detail::normalize_path(path), name);
  Handle attr = impl_->attribute(path, name);
  if (impl_->attribute_class(attr.get()) != H5T_STRING) impl_->error(field, "not a string");
  impl_->require_scalar(attr.get(), field);
  Handle type(detail::check_id(H5Aget_type(attr.get()), "H5Aget_type"), H5Tclose);
  Handle space(detail::check_id(H5Aget_space(attr.get()), "H5Aget_space"), H5Sclose);
  return read_strings(type.get(), space.get(),
                      [&](hid_t mem, void* buf) { return H5Aread(attr.get(), mem, buf); })
      .front();
}

std::int64_t ResultsReader::read_int_attribute(std::string_view path,
                                               std::string_view name) const {
  detail::QuietErrors quiet;
  const std::string field = fmt::format("{}@{}", detail::normalize_path(path), name);
  Handle attr = impl_->attribute(path, name);
  if (impl_->attribute_class(attr.get()) != H5T_INTEGER) impl_->error(field, "not an integer");
  impl_->require_scalar(attr.get(), field);
  std::int64_t value = 0;
  detail::check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), field);
  return value;
}

double ResultsReader::read_double_attribute(std::string_view path, std::string_view name) const {
  detail::QuietErrors quiet;
  const std::string field = fmt::format("{}@{}", detail::normalize_path(path), name);
  Handle attr = impl_->attribute(path, name);
  const H5T_class_t cls = impl_->attribute_class(attr.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) impl_->error(field, "not a number");
  impl_->require_scalar(attr.get(), field);
  double value = 0;
  detail::check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), field);
  return value;
}

std::vector<std::string> ResultsReader::read_string_list_attribute(std::string_view path,
                                                                   std::string_view name) const {
  detail::QuietErrors quiet;
  const std::string field = fmt::format("{}@{}", detail::normalize_path(path), name);
  Handle attr = impl_->attribute(path, name);
  if (impl_->attribute_class(attr.get()) != H5T_STRING) impl_->error(field, "not strings");
  Handle type(detail::check_id(H5Aget_type(attr.get()), "H5Aget_type"), H5Tclose);
  Handle space(detail::check_id(H5Aget_space(attr.get()), "H5Aget_space"), H5Sclose);
  return read_strings(type.get(), space.get(),
                      [&](hid_t mem, void* buf) { return H5Aread(attr.get(), mem, buf); });
}

std::vector<std::string> ResultsReader::table_columns(std::string_view group) const {
  return read_string_list_attribute(group, "columns");
}

ColumnType ResultsReader::column_type(std::string_view dataset) const {
  detail::QuietErrors quiet;
  Handle ds = impl_->dataset(dataset);
  Handle type(detail::check_id(H5Dget_type(ds.get()), "H5Dget_type"), H5Tclose);
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER:
      return ColumnType::kInt64;
    case H5T_FLOAT:
      return ColumnType::kFloat64;
    case H5T_STRING:
      return ColumnType::kString;
    default:  // NOTE: HDF5's enum has a dozen other classes vramsim never writes.
      impl_->error(detail::normalize_path(dataset), "neither integer, float nor string");
  }
}

std::int64_t ResultsReader::num_rows(std::string_view dataset) const {
  detail::QuietErrors quiet;
  Handle ds = impl_->dataset(dataset);
  Handle space(detail::check_id(H5Dget_space(ds.get()), "H5Dget_space"), H5Sclose);
  return static_cast<std::int64_t>(H5Sget_simple_extent_npoints(space.get()));
}

std::string ResultsReader::read_units(std::string_view dataset) const {
  return read_string_attribute(dataset, "units");
}

namespace {
template <typename T>
std::vector<T> read_numeric(hid_t ds, hid_t mem_type, const std::string& what) {
  Handle space(detail::check_id(H5Dget_space(ds), "H5Dget_space"), H5Sclose);
  std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!out.empty()) {
    detail::check_status(H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), what);
  }
  return out;
}
}  // namespace

std::vector<std::int64_t> ResultsReader::read_int_column(std::string_view dataset) const {
  if (column_type(dataset) != ColumnType::kInt64) {
    impl_->error(detail::normalize_path(dataset), "not an integer column");
  }
  detail::QuietErrors quiet;
  Handle ds = impl_->dataset(dataset);
  return read_numeric<std::int64_t>(ds.get(), H5T_NATIVE_INT64, detail::normalize_path(dataset));
}

std::vector<double> ResultsReader::read_double_column(std::string_view dataset) const {
  if (column_type(dataset) == ColumnType::kString) {
    impl_->error(detail::normalize_path(dataset), "not a numeric column");
  }
  detail::QuietErrors quiet;
  Handle ds = impl_->dataset(dataset);
  return read_numeric<double>(ds.get(), H5T_NATIVE_DOUBLE, detail::normalize_path(dataset));
}

std::vector<std::string> ResultsReader::read_string_column(std::string_view dataset) const {
  if (column_type(dataset) != ColumnType::kString) {
    impl_->error(detail::normalize_path(dataset), "not a string column");
  }
  detail::QuietErrors quiet;
  Handle ds = impl_->dataset(dataset);
  Handle type(detail::check_id(H5Dget_type(ds.get()), "H5Dget_type"), H5Tclose);
  Handle space(detail::check_id(H5Dget_space(ds.get()), "H5Dget_space"), H5Sclose);
  return read_strings(type.get(), space.get(), [&](hid_t mem, void* buf) {
    return H5Dread(ds.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  });
}

}  // namespace vramsim::io
