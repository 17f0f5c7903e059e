// TextOutput (timeline and snapshot files): written under a temporary name and renamed onto the
// final one by finish(); without finish() nothing appears and an earlier file survives; a bad
// destination is refused naming the flag, before anything is written.
#include "sim/io/text_output.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace fs = std::filesystem;
using vramsim::ConfigError;
using vramsim::io::TextOutput;
using vramsim::io::testing::ScratchDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

}  // namespace

TEST_CASE("finish() puts the whole file under its final name", "[io][out]") {
  ScratchDir dir("text_output");
  const fs::path path = dir / "a timeline.json";  // any file name
  {
    TextOutput out(path, "--timeline-out", "timeline file");
    out.stream() << "{\"traceEvents\": []}\n";
    CHECK_FALSE(fs::exists(path));  // only the temporary file so far
    CHECK(entries(dir.path()) == 1);
    out.finish();
  }
  CHECK(slurp(path) == "{\"traceEvents\": []}\n");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("without finish() the temporary file goes and an earlier file survives", "[io][out]") {
  ScratchDir dir("text_output_abort");
  const fs::path path = dir / "t.json";
  {
    std::ofstream(path) << "earlier";
  }
  {
    TextOutput out(path, "--timeline-out", "timeline file");
    out.stream() << "half";
  }
  CHECK(slurp(path) == "earlier");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("a destination that cannot be written is refused on its flag", "[io][out]") {
  ScratchDir dir("text_output_bad");
  const auto refusal = [](const fs::path& p) -> std::string {
    try {
      TextOutput out(p, "--memory-snapshot-out", "memory snapshot file");
    } catch (const ConfigError& e) {
      REQUIRE(e.report().problems().size() == 1);
      CHECK(e.report().problems().front().field == "--memory-snapshot-out");
      return e.report().problems().front().message;
    }
    return "";
  };
  CHECK(refusal(dir / "missing" / "s.pickle") ==
        "cannot write memory snapshot file '" + (dir / "missing" / "s.pickle").string() +
            "': directory '" + (dir / "missing").string() + "' does not exist");
  CHECK(refusal(dir.path()).find("it is a directory") != std::string::npos);
  CHECK(refusal("/dev/null").find("a character device, not a regular file") != std::string::npos);
  CHECK(entries(dir.path()) == 0);
}
