// Running the built `vramsim` binary from a test: exit code and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/catch.hpp"

namespace vramsim::testing {

struct Run {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

/// Runs a shell command line; exit code and output (stdout and stderr together).
inline Run shell(const std::string& cmd) {
  Run r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs `vramsim args` (in `dir` when given) through the shell.
inline Run run(const std::string& args, const std::filesystem::path& dir = {}) {
  std::string cmd = std::string(VRAMSIM_BINARY) + " " + args;
  if (!dir.empty()) cmd = "cd '" + dir.string() + "' && " + cmd;
  return shell(cmd);
}

#ifdef VRAMSIM_HAVE_MPI
/// Runs `vramsim args` as `ranks` MPI processes. Open MPI refuses root and more ranks than
/// cores unless told (CI runs as root on 2 cores).
inline Run run_mpi(const std::string& args, int ranks = 2) {
  return shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
               "OMPI_MCA_rmaps_base_oversubscribe=1 " +
               std::string(VRAMSIM_MPIEXEC) + " -np " + std::to_string(ranks) + " " +
               VRAMSIM_BINARY + " " + args);
}
#endif

inline std::string root() { return VRAMSIM_SOURCE_ROOT; }
inline std::string shared_data() { return VRAMSIM_SHARED_DATA; }

inline std::filesystem::path temp_dir() {
  auto d = std::filesystem::temp_directory_path() / "vramsim_cli_test";
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace vramsim::testing
