#include "sim/io/hdf5_detail.hpp"

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace vramsim::io::detail {

QuietErrors::QuietErrors() {
  // NOTE: every HDF5 call here comes after a QuietErrors, so the first one runs before the
  // library initialises: it then registers no teardown at exit. HDF5 1.10 keeps a file whose
  // close failed (a full disk, a file size limit) registered with its memory already freed,
  // and that teardown closes it again and crashes (issue 18). Every file here is closed
  // explicitly, so the teardown has nothing to do. Later calls are no-ops.
  (void)H5dont_atexit();
  (void)H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
  (void)H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { (void)H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }

namespace {

herr_t collect_error(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (err->desc != nullptr && err->desc[0] != '\0') {
    if (!out->empty()) *out += "; ";
    *out += err->desc;
  }
  return 0;
}

}  // namespace

std::string error_stack_message() {
  std::string out;
  (void)H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &out);
  return out.empty() ? std::string("unknown HDF5 error") : out;
}

void fail(std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", what, error_stack_message()));
}

hid_t check_id(hid_t id, std::string_view what) {
  if (id < 0) fail(what);
  return id;
}

void check_status(herr_t status, std::string_view what) {
  if (status < 0) fail(what);
}

std::string normalize_path(std::string_view path) {
  std::string out;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const std::size_t next = std::min(path.find('/', pos), path.size());
    const std::string_view part = path.substr(pos, next - pos);
    if (!part.empty()) {
      VRAMSIM_CHECK(part != "." && part != "..", "HDF5 path '{}' has a '{}' component", path,
                    part);
      out += '/';
      out += part;
    } else {
      // NOTE: empty components only at the ends ("/a", "a/"); "a//b" is a mistake.
      VRAMSIM_CHECK(pos == 0 || next == path.size(), "HDF5 path '{}' has an empty component",
                    path);
    }
    pos = next + 1;
  }
  return out.empty() ? std::string("/") : out;
}

bool path_exists(hid_t file, const std::string& path) {
  if (path == "/") return true;
  std::size_t pos = 1;
  while (true) {
    const std::size_t next = path.find('/', pos);
    const std::string prefix = path.substr(0, next);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == std::string::npos) return true;
    pos = next + 1;
  }
}

Handle utf8_vlen_string_type() {
  Handle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

Handle utf8_fixed_string_type(std::size_t width) {
  Handle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
  check_status(H5Tset_size(type.get(), std::max<std::size_t>(width, 1)), "H5Tset_size");
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

Handle open_or_create_group(hid_t file, const std::string& path) {
  if (path == "/") return Handle(check_id(H5Gopen2(file, "/", H5P_DEFAULT), "open '/'"), H5Gclose);
  // NOTE: parents are created one by one rather than through an intermediate-group link
  // property, so that every group gets our creation properties (no time stamps).
  Handle gcpl(check_id(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate"), H5Pclose);
  check_status(H5Pset_obj_track_times(gcpl.get(), false), "H5Pset_obj_track_times");
  std::size_t pos = 1;
  Handle group;
  while (true) {
    const std::size_t next = path.find('/', pos);
    const std::string prefix = path.substr(0, next);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) > 0) {
      group = Handle(check_id(H5Gopen2(file, prefix.c_str(), H5P_DEFAULT),
                              fmt::format("open group '{}'", prefix)),
                     H5Gclose);
    } else {
      group = Handle(check_id(H5Gcreate2(file, prefix.c_str(), H5P_DEFAULT, gcpl.get(),
                                         H5P_DEFAULT),
                              fmt::format("create group '{}'", prefix)),
                     H5Gclose);
    }
    if (next == std::string::npos) return group;
    pos = next + 1;
  }
}

Handle open_object(hid_t file, const std::string& path) {
  if (!path_exists(file, path)) {
    throw std::runtime_error(fmt::format("no HDF5 object at '{}'", path));
  }
  return Handle(check_id(H5Oopen(file, path.c_str(), H5P_DEFAULT),
                         fmt::format("open object '{}'", path)),
                H5Oclose);
}

std::string checked_c_string(std::string_view s, std::string_view what) {
  if (s.find('\0') != std::string_view::npos) {
    throw ConfigError(std::string(what), "contains a NUL byte, which HDF5 strings cannot store");
  }
  return std::string(s);
}

namespace {

/// Creates attribute `name` (deleting an existing one first) with `type` over `space`.
Handle create_attribute(hid_t object, std::string_view name, hid_t type, hid_t space) {
  const std::string n(name);
  if (H5Aexists(object, n.c_str()) > 0) {
    check_status(H5Adelete(object, n.c_str()), fmt::format("delete attribute '{}'", n));
  }
  return Handle(check_id(H5Acreate2(object, n.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                         fmt::format("create attribute '{}'", n)),
                H5Aclose);
}

void write_scalar_attribute(hid_t object, std::string_view name, hid_t file_type,
                            hid_t mem_type, const void* value) {
  Handle space(check_id(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose);
  Handle attr = create_attribute(object, name, file_type, space.get());
  check_status(H5Awrite(attr.get(), mem_type, value), fmt::format("write attribute '{}'", name));
}

}  // namespace

void write_string_attribute(hid_t object, std::string_view name, std::string_view value) {
  const std::string text = checked_c_string(value, name);
  const char* ptr = text.c_str();
  Handle type = utf8_vlen_string_type();
  write_scalar_attribute(object, name, type.get(), type.get(), &ptr);
}

void write_int_attribute(hid_t object, std::string_view name, std::int64_t value) {
  write_scalar_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void write_double_attribute(hid_t object, std::string_view name, double value) {
  write_scalar_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void write_string_list_attribute(hid_t object, std::string_view name,
                                 std::span<const std::string> values) {
  std::vector<std::string> texts;
  std::vector<const char*> ptrs;
  texts.reserve(values.size());
  for (const std::string& v : values) texts.push_back(checked_c_string(v, name));
  for (const std::string& t : texts) ptrs.push_back(t.c_str());
  const hsize_t dims[1] = {static_cast<hsize_t>(values.size())};
  Handle space(check_id(H5Screate_simple(1, dims, nullptr), "H5Screate_simple"), H5Sclose);
  Handle type = utf8_vlen_string_type();
  Handle attr = create_attribute(object, name, type.get(), space.get());
  if (!ptrs.empty()) {
    check_status(H5Awrite(attr.get(), type.get(), ptrs.data()),
                 fmt::format("write attribute '{}'", name));
  }
}

}  // namespace vramsim::io::detail
