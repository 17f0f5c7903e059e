// Helpers shared by the trace tests: a scratch directory for small inline files, draining a
// source, and catching the ConfigError message of a failing call.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving::testing {

/// A fresh directory under the system temp dir, unique per process and tag; removed at scope end.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag)
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("vramsim-traces-{}-{}", tag, ::getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// Writes `contents` byte for byte (no newline added) to `name`; returns its path.
  std::string write(std::string_view name, std::string_view contents) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream out(p, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    return p.string();
  }
  std::string operator/(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::vector<TraceRecord> drain(TraceSource& source) {
  std::vector<TraceRecord> out;
  while (auto r = source.next()) out.push_back(std::move(*r));
  return out;
}

inline std::vector<std::int64_t> arrivals_ns(const std::vector<TraceRecord>& records) {
  std::vector<std::int64_t> out;
  for (const auto& r : records) out.push_back(r.arrival.nanoseconds());
  return out;
}

/// The what() of the ConfigError `f` throws, or "no error" if it returns normally.
template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

inline std::string shared_trace(std::string_view name) {
  return std::string(VRAMSIM_SHARED_DATA) + "/traces/" + std::string(name);
}

}  // namespace vramsim::serving::testing
