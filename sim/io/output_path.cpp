#include "sim/io/output_path.hpp"

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace vramsim::io {

namespace fs = std::filesystem;

namespace {

/// What a non-regular file is, for the message refusing it.
std::string_view kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::none:
    case fs::file_type::not_found:
    case fs::file_type::regular:
    case fs::file_type::symlink:
    case fs::file_type::unknown: break;
  }
  return "of an unknown kind";
}

/// `<final>.tmp-<pid>`, or with a `-<k>` suffix when that name is taken (another writer of the
/// same file in this process, or a stale leftover from a killed process with the same pid). The
/// final name is shortened (from its end) so that the temporary name fits in kNameMax bytes: a
/// valid name of up to 255 bytes stays writable.
fs::path free_temp_name(const fs::path& final_path, std::string_view flag, std::string_view what) {
  const std::string name = final_path.filename().string();
  for (int k = 0; k < 1000; ++k) {
    const std::string suffix = k == 0 ? fmt::format(".tmp-{}", ::getpid())
                                      : fmt::format(".tmp-{}-{}", ::getpid(), k);
    const std::size_t keep = std::min(name.size(), kNameMax - suffix.size());
    const fs::path candidate = final_path.parent_path() / (name.substr(0, keep) + suffix);
    std::error_code ec;
    const bool taken = fs::exists(fs::symlink_status(candidate, ec));
    if (ec && ec != std::errc::no_such_file_or_directory) {
      throw ConfigError(std::string(flag),
                        fmt::format("cannot create {} '{}': temporary '{}': {}", what,
                                    final_path.string(), candidate.string(), ec.message()));
    }
    if (!taken) return candidate;
  }
  throw ConfigError(std::string(flag),
                    fmt::format("cannot create {} '{}': 1000 temporary '{}.tmp-{}*' files are in "
                                "the way (leftovers of killed runs: remove them)",
                                what, final_path.string(), final_path.string(), ::getpid()));
}

/// Where the data goes: `final_path`, or the file a symlink there points to (written through,
/// never replaced by a file). Refuses a destination that exists and is not a regular file (a
/// device node such as /dev/null, a FIFO, a socket, a directory): renaming onto it would replace
/// it.
fs::path write_target(const fs::path& final_path, std::string_view flag, std::string_view what) {
  std::error_code ec;
  fs::path target = final_path;
  // Follow the chain by hand: a dangling link (the first write through it) has no canonical
  // path. 40 links is Linux's limit too (MAXSYMLINKS).
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    const fs::path next = fs::read_symlink(target, ec);
    if (ec || hops == 40) {
      throw ConfigError(std::string(flag),
                        fmt::format("cannot write {} '{}': cannot resolve the symlink: {}", what,
                                    final_path.string(), ec ? ec.message() : "too many levels"));
    }
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw ConfigError(
        std::string(flag),
        fmt::format("cannot write {} '{}': {}{}, not a regular file; give the name of a file to "
                    "create or replace",
                    what, final_path.string(),
                    target == final_path ? "it is "
                                         : fmt::format("its target '{}' is ", target.string()),
                    kind_of(st.type())));
  }
  return target;
}

}  // namespace

int fsync_path(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return errno;
  const int rc = ::fsync(fd);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

OutputPaths prepare_output(const fs::path& final_path, std::string_view flag,
                           std::string_view what) {
  const auto fail = [&](std::string message) {
    throw ConfigError(std::string(flag), std::move(message));
  };
  if (final_path.empty()) fail(fmt::format("the {} name is empty", what));
  const fs::path dir = final_path.has_parent_path() ? final_path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fail(fmt::format("cannot write {} '{}': directory '{}' does not exist", what,
                     final_path.string(), dir.string()));
  }
  if (fs::is_directory(final_path, ec)) {
    fail(fmt::format("cannot write {} '{}': it is a directory", what, final_path.string()));
  }
  if (const std::size_t n = final_path.filename().string().size(); n > kNameMax) {
    fail(fmt::format("cannot write {} '{}': its name is {} bytes, more than the {} a file name "
                     "may have",
                     what, final_path.string(), n, kNameMax));
  }
  OutputPaths p;
  p.final_path = final_path;
  p.target_path = write_target(final_path, flag, what);
  p.temp_path = free_temp_name(p.target_path, flag, what);
  return p;
}

void commit_output(const OutputPaths& paths, std::string_view flag, std::string_view what) {
  if (const int err = fsync_path(paths.temp_path, false); err != 0) {
    throw ConfigError(std::string(flag), fmt::format("cannot sync {} '{}' to disk: {}", what,
                                                     paths.temp_path.string(),
                                                     std::strerror(err)));
  }
  std::error_code ec;
  fs::rename(paths.temp_path, paths.target_path, ec);
  if (ec) {
    throw ConfigError(std::string(flag), fmt::format("cannot rename '{}' to '{}': {}",
                                                     paths.temp_path.string(),
                                                     paths.final_path.string(), ec.message()));
  }
  // NOTE: best effort; some file systems refuse fsync on a directory, and the data is safe.
  const fs::path dir =
      paths.target_path.has_parent_path() ? paths.target_path.parent_path() : fs::path(".");
  (void)fsync_path(dir, true);
}

}  // namespace vramsim::io
