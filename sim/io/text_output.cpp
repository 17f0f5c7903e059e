#include "sim/io/text_output.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace vramsim::io {

namespace fs = std::filesystem;

TextOutput::TextOutput(const fs::path& final_path, std::string flag, std::string what)
    : paths_(prepare_output(final_path, flag, what)), flag_(std::move(flag)),
      what_(std::move(what)) {
  out_.open(paths_.temp_path, std::ios::binary | std::ios::trunc);
  if (!out_) {
    const int err = errno;
    throw ConfigError(flag_, fmt::format("cannot create {} '{}' (temporary '{}'): {}", what_,
                                         paths_.final_path.string(), paths_.temp_path.string(),
                                         std::strerror(err)));
  }
}

TextOutput::~TextOutput() {
  if (finished_) return;
  out_.close();
  std::error_code ec;
  fs::remove(paths_.temp_path, ec);  // best effort: nothing useful to do on failure here
}

void TextOutput::finish() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    std::error_code ec;
    fs::remove(paths_.temp_path, ec);
    finished_ = true;  // nothing left to clean up
    throw ConfigError(flag_, fmt::format("cannot write {} '{}': a write failed (a full disk or "
                                         "a file size limit?)",
                                         what_, paths_.final_path.string()));
  }
  try {
    commit_output(paths_, flag_, what_);
  } catch (...) {
    std::error_code ec;
    fs::remove(paths_.temp_path, ec);
    finished_ = true;
    throw;
  }
  finished_ = true;
}

}  // namespace vramsim::io
