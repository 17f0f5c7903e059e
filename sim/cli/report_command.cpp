// `vramsim report RESULTS.h5 -o DIR`: PNG figures and an index.html page from a results file,
// drawn by analysis/report.py (Python: h5py, matplotlib). This command checks the inputs, finds
// the script in the source tree and runs it with the system Python, passing its exit code on.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"

extern char** environ;

namespace vramsim::cli {

namespace {

// Debian's python3, where python3-h5py and python3-matplotlib install (scripts/setup.sh);
// VRAMSIM_PYTHON names another interpreter.
constexpr const char* kDefaultPython = "/usr/bin/python3";
constexpr const char* kInstallHint =
    "install them with scripts/setup.sh, or on Debian/Ubuntu:\n"
    "  sudo apt-get install python3 python3-h5py python3-matplotlib python3-pandas";

struct ReportOptions {
  std::string results, out_dir;
  std::int64_t max_points = 20000;
};

std::string python_path() {
  if (const char* env = std::getenv("VRAMSIM_PYTHON"); env != nullptr && *env != '\0') return env;
  return kDefaultPython;
}

// Runs argv[0] with argv, waits, and returns its exit status; -1 when it could not start (errno
// says why) and -2 when a signal ended it.
int run_and_wait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0) {
    errno = rc;  // posix_spawn returns the error instead of setting errno
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

int run_report(const ReportOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(o.results, ec);
  if (!fs::exists(st)) {
    throw ConfigError("RESULTS", fmt::format("results file '{}' does not exist", o.results));
  }
  if (fs::is_directory(st)) {
    throw ConfigError("RESULTS", fmt::format("'{}' is a directory, not a results file (give "
                                             "the .h5 file written with --out)",
                                             o.results));
  }
  if (!fs::is_regular_file(st)) {
    throw ConfigError("RESULTS", fmt::format("'{}' is not a regular file", o.results));
  }
  const fs::path script = project_root() / "analysis" / "report.py";
  if (!fs::is_regular_file(script)) {
    std::fprintf(stderr,
                 "vramsim report: cannot find '%s'; set VRAMSIM_ROOT to the vramsim source "
                 "tree\n",
                 script.string().c_str());
    return kExitInfeasible;
  }
  const std::string python = python_path();
  if (!fs::exists(python)) {
    std::fprintf(stderr,
                 "vramsim report: needs Python 3 with h5py and matplotlib at %s (set "
                 "VRAMSIM_PYTHON for another interpreter); %s\n",
                 python.c_str(), kInstallHint);
    return kExitInfeasible;
  }
  // -B: no __pycache__ written into the source tree.
  std::vector<std::string> args = {python, "-B", script.string(), o.results};
  if (!o.out_dir.empty()) args.insert(args.end(), {"-o", o.out_dir});
  args.insert(args.end(), {"--max-points", std::to_string(o.max_points)});
  const int code = run_and_wait(args);
  if (code == kExitOk || code == kExitBadInput) return code;  // report.py said what and why
  if (code == kExitInfeasible) {
    std::fprintf(stderr, "vramsim report: %s lacks the Python packages named above "
                 "(scripts/setup.sh installs them)\n", python.c_str());
    return kExitInfeasible;
  }
  if (code == -1) {
    std::fprintf(stderr, "vramsim report: cannot run %s: %s\n", python.c_str(),
                 std::strerror(errno));
    return kExitInfeasible;
  }
  if (code == -2) {
    std::fprintf(stderr, "vramsim report: %s was killed by a signal\n", script.string().c_str());
    return kExitInfeasible;
  }
  std::fprintf(stderr, "vramsim report: %s failed with exit code %d (see the messages above)\n",
               script.string().c_str(), code);
  return code;
}

}  // namespace

RunFn register_report(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "PNG figures and an HTML page from a results file (runs analysis/report.py)");
  cmd->add_option("results", opts->results, "A results file written with --out")->required();
  cmd->add_option("-o,--out-dir", opts->out_dir,
                  "Folder for index.html and the figures (created if missing; default: "
                  "RESULTS_report next to the file)");
  cmd->add_option("--max-points", opts->max_points,
                  "Most points drawn per line; longer series are downsampled")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{10'000'000}));
  cmd->footer(
      "Needs Python 3 with h5py and matplotlib (scripts/setup.sh installs them); "
      "VRAMSIM_PYTHON names the interpreter (default /usr/bin/python3).\n");
  return [cmd, opts]() { return cmd->parsed() ? run_report(*opts) : -1; };
}

}  // namespace vramsim::cli
