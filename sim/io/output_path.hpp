// Where a file named on the command line goes, written crash-safely: the checks made before any
// simulation runs (the directory exists, the name fits, the destination is a regular file or a
// symlink to one) and the commit after it (fsync, atomic rename onto the final name).
//
// The file is built under a temporary name in the destination directory (`<final>.tmp-<pid>`,
// the final name cut from its end so that the temporary name fits in NAME_MAX = 255 bytes). A
// symlink at the final name is written through (its target is replaced, the link kept). The
// HDF5 results writer (results_file.hpp) and the text outputs (text_output.hpp) share this.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace vramsim::io {

struct OutputPaths {
  std::filesystem::path final_path;   // as given
  std::filesystem::path target_path;  // final_path, or a symlink's target (written through)
  std::filesystem::path temp_path;    // free now; the caller creates it
};

/// Checks `final_path` and picks its temporary name. `flag` names the option the path came from
/// (the ConfigError's field, "--out"), `what` the kind of file in messages ("results file").
/// Throws ConfigError(flag, ...) for an empty name, a missing directory, a directory, a name over
/// 255 bytes, a symlink that does not resolve, or a destination that is not a regular file.
OutputPaths prepare_output(const std::filesystem::path& final_path, std::string_view flag,
                           std::string_view what);

/// fsyncs the finished temporary file, renames it onto the target and fsyncs the directory
/// (best effort). Throws ConfigError(flag, ...) when the sync or the rename fails.
void commit_output(const OutputPaths& paths, std::string_view flag, std::string_view what);

/// fsync(2) on a path opened read-only; returns errno or 0.
int fsync_path(const std::filesystem::path& path, bool directory);

/// The longest file name Linux file systems hold (NAME_MAX of <linux/limits.h>).
inline constexpr std::size_t kNameMax = 255;

}  // namespace vramsim::io
