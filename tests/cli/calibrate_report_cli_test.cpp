// `vramsim calibrate-report`: the fixture profile against the H100 SXM sheet.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

struct Run {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Run run_vramsim(const std::string& args) {
  const std::string cmd = std::string(VRAMSIM_BINARY) + " " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kFixture =
    std::string(VRAMSIM_SOURCE_ROOT) + "/tests/hardware/data/h100_fixture_profile.json";

}  // namespace

TEST_CASE("calibrate-report compares each table with the sheet and reports held-out errors",
          "[cli][calibration]") {
  const Run r = run_vramsim("calibrate-report " + kFixture + " --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["device_id"] == "h100-sxm");
  CHECK(j["synthetic"] == true);
  // The largest device-kernel copy: 2 GiB of traffic in 5 us + 2 GiB / 2.9 TB/s (rounded to
  // 4 digits in the fixture), against the sheet's 3.35 TB/s.
  CHECK(j["copy"][0]["what"] == "device-kernel 1024 MiB");
  CHECK(j["copy"][0]["datasheet"].get<double>() == 3.35e12);
  CHECK(j["copy"][0]["fraction_of_datasheet"].get<double>() == Approx(0.86).epsilon(0.01));
  CHECK(j["gemm"][0]["what"] == "bf16 best of all shapes");
  CHECK(j["gemm"][0]["datasheet"].get<double>() == 989.4e12);
  CHECK(j["holdout"].size() == 6);
  CHECK(j["holdout"][0]["table"] == "copy");
}

TEST_CASE("calibrate-report prints a table that marks a synthetic profile", "[cli][calibration]") {
  const Run r = run_vramsim("calibrate-report " + kFixture);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("SYNTHETIC") != std::string::npos);
  CHECK(r.out.find("held-out check") != std::string::npos);
}

TEST_CASE("calibrate-report of a missing profile is bad input naming the file",
          "[cli][calibration]") {
  const Run r = run_vramsim("calibrate-report /nonexistent/profile.json");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("/nonexistent/profile.json") != std::string::npos);
}

TEST_CASE("calibrate-report writes the profile's tables as HDF5", "[cli][calibration]") {
  const auto out = vramsim::testing::temp_dir() / "profile.h5";
  std::filesystem::remove(out);
  const auto r = vramsim::testing::run("calibrate-report " + vramsim::testing::root() +
                                       "/tests/hardware/data/h100_fixture_profile.json --out " +
                                       out.string());
  REQUIRE(r.exit_code == 0);
  const vramsim::io::ResultsReader in(out);
  CHECK_FALSE(in.read_int_column("/calibration/gemms/m").empty());
  CHECK_FALSE(in.read_int_column("/calibration/copies/bytes").empty());
  CHECK(in.read_int_column("/calibration/memory/total_bytes").size() == 1);
}
