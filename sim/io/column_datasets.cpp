// Creating and filling the 1-D column datasets of a results file (declared in hdf5_detail.hpp).
#include "sim/io/hdf5_detail.hpp"

#include "sim/core/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace vramsim::io::detail {

namespace {

/// Upper bound on one chunk's size: large enough for good compression, small enough that a
/// reader touching one row does not inflate much.
constexpr std::int64_t kMaxChunkBytes = std::int64_t{4} << 20;

hsize_t to_hsize(std::int64_t n) {
  VRAMSIM_CHECK(n >= 0, "negative HDF5 size {}", n);
  return static_cast<hsize_t>(n);
}

void check_name(const std::string& name) {
  VRAMSIM_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "." &&
                    name != "..",
                "invalid column name '{}'", name);
}

/// Selects rows [offset, offset + count) of `dataset` and writes `buffer` (of `mem_type`).
void write_selection(hid_t dataset, std::int64_t offset, std::size_t count, hid_t mem_type,
                     const void* buffer) {
  if (count == 0) return;
  Handle file_space(check_id(H5Dget_space(dataset), "H5Dget_space"), H5Sclose);
  const hsize_t start[1] = {to_hsize(offset)};
  const hsize_t size[1] = {static_cast<hsize_t>(count)};
  check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr),
               "H5Sselect_hyperslab");
  Handle mem_space(check_id(H5Screate_simple(1, size, nullptr), "H5Screate_simple"), H5Sclose);
  check_status(H5Dwrite(dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer),
               "write dataset rows");
}

}  // namespace

hid_t numeric_file_type(ColumnType type) {
  switch (type) {
    case ColumnType::kInt64:
      return H5T_STD_I64LE;
    case ColumnType::kFloat64:
      return H5T_IEEE_F64LE;
    case ColumnType::kString:
      break;
  }
  VRAMSIM_UNREACHABLE("numeric_file_type called for a string column");
}

void check_column_shape(const std::string& name, ColumnType type, std::string_view units) {
  check_name(name);
  if (type == ColumnType::kString) {
    VRAMSIM_CHECK(units.empty(), "string column '{}' must have units \"\", got \"{}\"", name,
                  units);
  } else {
    VRAMSIM_CHECK(!units.empty(), "numeric column '{}' needs a units string (\"1\" for counts)",
                  name);
  }
}

Handle create_column_dataset(hid_t group, const std::string& name, hid_t file_type,
                             std::int64_t rows, bool extendible, std::size_t row_bytes,
                             std::string_view units, const WriterOptions& options) {
  VRAMSIM_CHECK(options.chunk_rows > 0, "chunk_rows must be positive, got {}", options.chunk_rows);
  VRAMSIM_CHECK(options.deflate_level >= 0 && options.deflate_level <= 9,
                "deflate_level must be in [0, 9], got {}", options.deflate_level);
  const hsize_t dims[1] = {to_hsize(rows)};
  const hsize_t max_dims[1] = {extendible ? H5S_UNLIMITED : to_hsize(rows)};
  Handle space(check_id(H5Screate_simple(1, dims, max_dims), "H5Screate_simple"), H5Sclose);

  Handle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  // NOTE: no modification/creation times, so identical inputs give identical files.
  check_status(H5Pset_obj_track_times(dcpl.get(), false), "H5Pset_obj_track_times");
  const bool chunked = extendible || (rows > 0 && rows >= options.compress_min_rows);
  if (chunked) {
    const std::int64_t width = static_cast<std::int64_t>(std::max<std::size_t>(row_bytes, 1));
    std::int64_t chunk =
        std::min(options.chunk_rows, std::max<std::int64_t>(1, kMaxChunkBytes / width));
    if (!extendible) chunk = std::min(chunk, rows);
    const hsize_t chunk_dims[1] = {to_hsize(chunk)};
    check_status(H5Pset_chunk(dcpl.get(), 1, chunk_dims), "H5Pset_chunk");
    if (options.deflate_level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
      check_status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
      check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(options.deflate_level)),
                   "H5Pset_deflate");
    }
  }
  Handle dataset(check_id(H5Dcreate2(group, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                     dcpl.get(), H5P_DEFAULT),
                          fmt::format("create dataset '{}'", name)),
                 H5Dclose);
  write_string_attribute(dataset.get(), "units", units);
  return dataset;
}

void write_rows(hid_t dataset, std::int64_t offset, std::span<const std::int64_t> values) {
  write_selection(dataset, offset, values.size(), H5T_NATIVE_INT64, values.data());
}

void write_rows(hid_t dataset, std::int64_t offset, std::span<const double> values) {
  write_selection(dataset, offset, values.size(), H5T_NATIVE_DOUBLE, values.data());
}

void write_rows(hid_t dataset, std::int64_t offset, std::span<const std::string> values) {
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const std::string& v : values) {
    if (v.find('\0') != std::string::npos) (void)checked_c_string(v, "string column value");
    ptrs.push_back(v.c_str());
  }
  Handle type = utf8_vlen_string_type();
  write_selection(dataset, offset, ptrs.size(), type.get(), ptrs.data());
}

void write_whole_column(hid_t group, const std::string& where, const Column& column,
                        const WriterOptions& options) {
  check_column_shape(column.name, column.type(), column.units);
  const auto rows = static_cast<std::int64_t>(column.size());
  VRAMSIM_CHECK(H5Lexists(group, column.name.c_str(), H5P_DEFAULT) <= 0,
                "dataset '{}/{}' written twice", where, column.name);
  switch (column.type()) {
    case ColumnType::kInt64: {
      const auto values = std::get<0>(column.values);
      Handle ds = create_column_dataset(group, column.name, H5T_STD_I64LE, rows, false, 8,
                                        column.units, options);
      write_rows(ds.get(), 0, values);
      return;
    }
    case ColumnType::kFloat64: {
      const auto values = std::get<1>(column.values);
      Handle ds = create_column_dataset(group, column.name, H5T_IEEE_F64LE, rows, false, 8,
                                        column.units, options);
      write_rows(ds.get(), 0, values);
      return;
    }
    case ColumnType::kString: {
      const auto values = std::get<2>(column.values);
      if (column.string_layout == StringLayout::kVariable) {
        Handle type = utf8_vlen_string_type();
        Handle ds = create_column_dataset(group, column.name, type.get(), rows, false,
                                          sizeof(char*), column.units, options);
        write_rows(ds.get(), 0, values);
        return;
      }
      std::size_t width = 1;
      for (const std::string& v : values) width = std::max(width, v.size());
      // NUL padding: a value may not contain NUL itself, or it would read back truncated.
      std::vector<char> buffer(values.size() * width, '\0');
      for (std::size_t i = 0; i < values.size(); ++i) {
        (void)checked_c_string(values[i], fmt::format("{}/{}", where, column.name));
        std::memcpy(buffer.data() + i * width, values[i].data(), values[i].size());
      }
      Handle type = utf8_fixed_string_type(width);
      Handle ds = create_column_dataset(group, column.name, type.get(), rows, false, width,
                                        column.units, options);
      write_selection(ds.get(), 0, values.size(), type.get(), buffer.data());
      return;
    }
  }
  VRAMSIM_UNREACHABLE("invalid ColumnType");
}

}  // namespace vramsim::io::detail
