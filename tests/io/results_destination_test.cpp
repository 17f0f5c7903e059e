// Where `--out` may write (issue 18): a symlink is written through to its target, never replaced
// by a file; a device node, a FIFO or a socket is refused before anything is created (renaming
// onto /dev/null as root would replace the system's /dev/null); a valid name of up to 255 bytes
// is writable although the temporary name is longer; a failed creation leaves no file.
#include "sim/io/results_file.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace fs = std::filesystem;
using vramsim::ConfigError;
using vramsim::io::ResultsReader;
using vramsim::io::ResultsWriter;
using vramsim::io::testing::ScratchDir;

namespace {

void write_marker(const fs::path& path, const std::string& marker) {
  ResultsWriter out(path);
  out.set_string_attribute("/", "created_by", marker);
  out.finish();
}

/// The ConfigError message of creating a writer at `path` ("" when none is thrown).
std::string refusal(const fs::path& path) {
  try {
    ResultsWriter out(path);
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems().front().field == "--out");
    return e.report().problems().front().message;
  }
  return "";
}

}  // namespace

TEST_CASE("a symlink as --out is written through to its target and stays a symlink",
          "[io][out]") {
  ScratchDir dir("symlink");
  fs::create_directories(dir / "data");
  fs::create_symlink("data/real.h5", dir / "link.h5");  // dangling until the first write
  write_marker(dir / "link.h5", "first");
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.h5")));
  CHECK(fs::is_regular_file(dir / "data" / "real.h5"));
  write_marker(dir / "link.h5", "second");  // replaces the target, not the link
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.h5")));
  CHECK(ResultsReader(dir / "data" / "real.h5").read_string_attribute("/", "created_by") ==
        "second");
  CHECK(dir.entries() == std::vector<std::string>{"data", "link.h5"});
}

TEST_CASE("a device node, a FIFO or a socket as --out is refused, never renamed over",
          "[io][out]") {
  ScratchDir dir("special");
  SECTION("/dev/null") {
    struct stat before {};
    REQUIRE(::stat("/dev/null", &before) == 0);
    const std::string message = refusal("/dev/null");
    CHECK(message.find("'/dev/null': it is a character device, not a regular file") !=
          std::string::npos);
    struct stat after {};
    REQUIRE(::stat("/dev/null", &after) == 0);
    CHECK(S_ISCHR(after.st_mode));
    CHECK(after.st_rdev == before.st_rdev);
  }
  SECTION("a FIFO") {
    const fs::path fifo = dir / "pipe.h5";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(refusal(fifo).find("a FIFO (named pipe), not a regular file") != std::string::npos);
    CHECK(fs::is_fifo(fifo));
    CHECK(dir.entries() == std::vector<std::string>{"pipe.h5"});
  }
  SECTION("a socket") {
    const fs::path sock = dir / "s.h5";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
    CHECK(refusal(sock).find("a socket, not a regular file") != std::string::npos);
    ::close(fd);
  }
  SECTION("a symlink to a device node") {
    fs::create_symlink("/dev/null", dir / "null.h5");
    CHECK(refusal(dir / "null.h5").find("its target '/dev/null' is a character device") !=
          std::string::npos);
    CHECK(fs::is_symlink(fs::symlink_status(dir / "null.h5")));
  }
}

TEST_CASE("a valid 255-byte results name is writable: the temporary name is shortened to fit",
          "[io][out]") {
  ScratchDir dir("longname");
  for (std::size_t length : {200u, 250u, 253u, 255u}) {
    INFO(length);
    const std::string name = std::string(length - 3, 'r') + ".h5";
    ResultsWriter out(dir / name);
    CHECK(out.temp_path().filename().string().size() <= 255);
    CHECK(out.temp_path().parent_path() == dir.path());
    out.finish();
    CHECK(fs::is_regular_file(dir / name));
    fs::remove(dir / name);
  }
  CHECK(dir.entries().empty());
  // One byte over the limit is refused up front, named as such.
  const std::string message = refusal(dir / (std::string(256 - 3, 'r') + ".h5"));
  CHECK(message.find("its name is 256 bytes, more than the 255 a file name may have") !=
        std::string::npos);
  CHECK(message.find("too many") == std::string::npos);
  CHECK(dir.entries().empty());
}
