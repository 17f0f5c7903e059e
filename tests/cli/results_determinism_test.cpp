// Determinism of results files (issue 7): the same inputs give byte-identical HDF5 files for
// `train --out` and `budget --out`, as tests/cli/serve_cli_test.cpp checks for `serve --out`.
// Each pair of runs uses the same relative --out from two folders, so that even the stored
// command line is the same.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::temp_dir;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `args` (ending in --out run.h5) in two fresh folders; returns the first file's path after
// checking both files are identical, byte for byte.
std::filesystem::path run_twice_identical(const std::string& tag, const std::string& args) {
  const std::string pid = std::to_string(::getpid());
  const auto a = temp_dir() / (tag + "_a_" + pid);
  const auto b = temp_dir() / (tag + "_b_" + pid);
  for (const auto& d : {a, b}) {
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
  }
  REQUIRE(run(args, a).exit_code == 0);
  REQUIRE(run(args, b).exit_code == 0);
  const std::string bytes_a = slurp(a / "run.h5");
  CHECK(bytes_a.size() > 1000);
  CHECK(bytes_a == slurp(b / "run.h5"));
  std::filesystem::remove_all(b);
  return a / "run.h5";
}

}  // namespace

TEST_CASE("the same training scenario writes byte-identical results files", "[cli][train]") {
  const auto file = run_twice_identical(
      "determinism_train",
      "train " + root() + "/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml --out run.h5");
  const vramsim::io::ResultsReader in(file);
  CHECK(in.has_object("/train"));
}

TEST_CASE("the same budget inputs write byte-identical results files", "[cli][budget]") {
  const auto file = run_twice_identical(
      "determinism_budget", "budget " + root() + "/scenarios/default.toml --tp 2 --out run.h5");
  const vramsim::io::ResultsReader in(file);
  CHECK(in.has_object("/budget"));
}
