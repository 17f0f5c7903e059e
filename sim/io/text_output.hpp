// TextOutput: a text or binary file named on the command line (a timeline JSON, a memory
// snapshot pickle), written crash-safely like the HDF5 results (output_path.hpp): built under a
// temporary name, renamed onto the final name only by finish(); destroyed without finish() (an
// exception, an early return) it deletes the temporary file and leaves the final name untouched.
//
//   TextOutput out("run.json", "--timeline-out", "timeline file");  // checks before simulating
//   out.stream() << "{...}";
//   out.finish();                                                   // now run.json exists
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "sim/io/output_path.hpp"

namespace vramsim::io {

class TextOutput {
 public:
  /// Checks the destination and creates the temporary file. Throws ConfigError(flag, ...) as
  /// prepare_output does, or when the temporary file cannot be created.
  TextOutput(const std::filesystem::path& final_path, std::string flag, std::string what);
  ~TextOutput();
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  std::ostream& stream() { return out_; }
  const std::filesystem::path& final_path() const { return paths_.final_path; }

  /// Flushes and closes the file, fsyncs it and renames it onto the final name. Throws
  /// ConfigError(flag, ...) when a write failed (a full disk) or the commit fails; the temporary
  /// file is then removed.
  void finish();

 private:
  OutputPaths paths_;
  std::string flag_, what_;
  std::ofstream out_;
  bool finished_ = false;
};

}  // namespace vramsim::io
