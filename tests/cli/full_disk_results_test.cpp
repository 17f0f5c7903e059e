// A results file that cannot be written to the end (issue 18): a full disk, or here a file size
// limit (RLIMIT_FSIZE, with SIGXFSZ ignored, so writes fail with EFBIG as on a full disk; no root
// or small file system needed). `vramsim budget|serve --out` must name the file and the reason
// in one line, exit 2 and leave no file behind: no 0-byte temporary file, no crash at exit in
// HDF5's teardown (a file whose close failed stayed registered with its memory freed).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;

struct Limited {
  bool exited = false;  // false: a signal ended it (a crash)
  int exit_code = -1;
  std::string out;
};

/// `vramsim args...` in `dir` with files limited to `max_file_bytes`.
Limited run_limited(const fs::path& dir, std::vector<std::string> args,
                    rlim_t max_file_bytes) {
  args.insert(args.begin(), VRAMSIM_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  REQUIRE(::pipe(pipe_fds) == 0);  // a pipe: RLIMIT_FSIZE limits files, not pipes
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{max_file_bytes, max_file_bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  Limited r;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) {
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  r.exited = WIFEXITED(status);
  r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("a results file the disk cannot hold exits 2 with one line and leaves no file",
          "[cli][out][disk]") {
  const fs::path dir = vramsim::testing::temp_dir() / ("full_disk_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> serve = {"serve", "--model", "meta-llama/Llama-3.1-8B",
                                          "--gpu", "h100-sxm", "--num-requests", "2000",
                                          "--out", "big.h5"};
  // 16 KiB: the file is created, its data does not fit (the failure comes at close).
  // 0 B: not even HDF5's superblock fits (the failure comes at creation).
  for (const rlim_t limit : {rlim_t{16384}, rlim_t{0}}) {
    INFO("limit " << limit << " B");
    const Limited r = run_limited(dir, serve, limit);
    INFO(r.out);
    CHECK(r.exited);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --out: cannot") != std::string::npos);
    CHECK(r.out.find("'big.h5'") != std::string::npos);
    CHECK(r.out.find("File too large") != std::string::npos);
    CHECK(entries(dir).empty());
  }
  const Limited b = run_limited(
      dir, {"budget", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--out", "b.h5"},
      0);
  INFO(b.out);
  CHECK(b.exited);
  CHECK(b.exit_code == 2);
  CHECK(entries(dir).empty());
  fs::remove_all(dir);
}
