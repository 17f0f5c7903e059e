// What every libFuzzer target in fuzz/ shares: the parsers read files, so each input is written
// to a file of the name the parser expects (in a per-process folder under /dev/shm when it
// exists, else the system temp folder) and the parser is called on that path. The readers are
// used exactly as the command line uses them; no test-only entry point changes their behaviour.
//
// The contract under test is the CLI's (sim/cli/main.cpp): bad input is a vramsim::ConfigError
// (exit 2). Any other exception escaping, a crash, a sanitizer report, a hang or unbounded
// memory is a bug, and libFuzzer reports it (an uncaught exception aborts the target).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "sim/core/error.hpp"

namespace vramsim::fuzz {

/// The per-process folder the inputs are written to (created on first use).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    std::filesystem::path base = "/dev/shm";
    if (!std::filesystem::is_directory(base, ec)) base = std::filesystem::temp_directory_path();
    auto d = base / ("vramsim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

/// Writes the fuzzer's bytes to scratch_dir()/name and returns that path.
inline std::filesystem::path write_input(const std::uint8_t* data, std::size_t size,
                                         std::string_view name) {
  const auto path = scratch_dir() / std::string(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

/// Runs `parse`, treating a ConfigError (the documented answer to bad input) as success.
template <class F>
void expect_config_error_at_most(F&& parse) {
  try {
    parse();
  } catch (const ConfigError&) {
    // Bad input, reported the way the CLI reports it: fine.
  }
}

}  // namespace vramsim::fuzz
