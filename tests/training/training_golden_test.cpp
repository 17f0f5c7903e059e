// Golden scenario tests (STYLE.md 6.8): every training scenario in scenarios/training (a .toml
// file with a [model] table; cluster files are not scenarios) is run through `vramsim train
// --format json` and its summary compared with the committed <name>.expected.json beside it.
//
// Compared: every key the expected file holds, at the top level and per device. Booleans and
// strings must be equal; numbers must agree within a relative 1e-6 (the simulation is
// deterministic: the tolerance only absorbs JSON's printing of doubles). A changed cost model
// therefore shows up here as a diff to review, like code.
//
// To regenerate after an intended change:  VRAMSIM_UPDATE_GOLDEN=1 build/tests/training/
// training_tests "[golden]"   (then review `git diff scenarios/training`).
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kRelativeTolerance = 1e-6;

// The summary fields kept in an expected file (the DESIGN.md contract plus the time split).
constexpr std::array kTopFields{"fits",
                                "peak_allocated_bytes",
                                "peak_reserved_bytes",
                                "model_state_bytes",
                                "activation_bytes",
                                "step_time_s",
                                "tokens_per_s",
                                "mfu",
                                "num_micro_batches"};
constexpr std::array kDeviceFields{
    "pp_stage",          "peak_allocated_bytes", "peak_reserved_bytes",
    "model_state_bytes", "activation_bytes",     "fits",
    "compute_s",         "exposed_comm_s",       "bubble_s"};

std::vector<fs::path> scenarios() {
  std::vector<fs::path> out;
  for (const auto& entry :
       fs::directory_iterator(fs::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "training")) {
    if (entry.path().extension() != ".toml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("\n[model]") != std::string::npos) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

json run_json(const fs::path& scenario) {
  const std::string cmd =
      std::string(VRAMSIM_BINARY) + " train " + scenario.string() + " --format json 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return json::parse(out);
}

template <std::size_t N>
json pick(const json& from, const std::array<const char*, N>& fields) {
  json j;
  for (const char* f : fields) j[f] = from.at(f);
  return j;
}

json summary(const json& full) {
  json j = pick(full, kTopFields);
  j["devices"] = json::array();
  for (const json& d : full.at("devices")) j["devices"].push_back(pick(d, kDeviceFields));
  return j;
}

void compare(const json& expected, const json& actual, const std::string& path) {
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      INFO(path + "." + key);
      REQUIRE(actual.contains(key));
      compare(value, actual.at(key), path + "." + key);
    }
  } else if (expected.is_array()) {
    INFO(path);
    REQUIRE(actual.is_array());
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare(expected[i], actual[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (expected.is_number()) {
    INFO(path << ": expected " << expected.dump() << ", got " << actual.dump());
    const double e = expected.get<double>(), a = actual.get<double>();
    CHECK(std::abs(a - e) <= kRelativeTolerance * std::max(std::abs(e), 1e-12));
  } else {
    INFO(path);
    CHECK(actual == expected);
  }
}

}  // namespace

TEST_CASE("every training scenario reproduces its expected summary", "[training][golden]") {
  const std::vector<fs::path> files = scenarios();
  REQUIRE(files.size() >= 4);
  const bool update = std::getenv("VRAMSIM_UPDATE_GOLDEN") != nullptr;
  for (const fs::path& scenario : files) {
    CAPTURE(scenario.filename().string());
    fs::path expected_file = scenario;
    expected_file.replace_extension(".expected.json");
    const json actual = summary(run_json(scenario));
    if (update) {
      std::ofstream(expected_file) << actual.dump(2) << "\n";
      continue;
    }
    REQUIRE(fs::exists(expected_file));
    std::ifstream in(expected_file);
    compare(json::parse(in), actual, "");
  }
}
