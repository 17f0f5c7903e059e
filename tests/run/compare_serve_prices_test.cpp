// topologies/prices.toml and its loader (sim/run/gpu_prices): every device has a positive price
// with its source, lookups ignore case, and a bad table is refused naming file:line and field.
#include "sim/run/gpu_prices.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "tests/catch.hpp"

namespace {

namespace fs = std::filesystem;
using namespace vramsim;

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

// A prices file with `text` in a fresh folder, beside a devices/ folder holding h100-sxm only.
fs::path write_prices(const std::string& name, const std::string& text) {
  const fs::path d = fs::temp_directory_path() / "vramsim_run_test" / "prices" / name;
  fs::remove_all(d);
  fs::create_directories(d / "devices");
  std::ofstream(d / "devices" / "h100-sxm.toml") << "id = \"h100-sxm\"\n";
  std::ofstream(d / "prices.toml") << text;
  return d;
}

std::string problems_of(const fs::path& root) {
  try {
    (void)run::price_per_gpu_hour(root, "h100-sxm");
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

}  // namespace

TEST_CASE("the shipped price table prices every device of topologies/devices with a source",
          "[run][compare][prices]") {
  const auto prices = run::load_gpu_prices(kTopologies / "prices.toml", kTopologies / "devices");
  std::size_t num_devices = 0;
  for (const auto& entry : fs::directory_iterator(kTopologies / "devices")) {
    if (entry.path().extension() != ".toml") continue;
    ++num_devices;
    const std::string id = entry.path().stem().string();
    INFO(id);
    REQUIRE(prices.count(id) == 1);
    CHECK(prices.at(id).usd_per_gpu_hour > 0.0);
    CHECK_FALSE(prices.at(id).source.empty());
  }
  CHECK(prices.size() == num_devices);
}

TEST_CASE("a price is looked up by device id, case ignored, and is absent for an unknown GPU",
          "[run][compare][prices]") {
  const fs::path root = write_prices(
      "lookup", "[h100-sxm]\nusd_per_gpu_hour = 2.5\nsource = \"my contract, 2026\"\n");
  const auto p = run::price_per_gpu_hour(root, "H100-SXM");
  REQUIRE(p);
  CHECK(p->usd_per_gpu_hour == 2.5);
  CHECK(p->source == "my contract, 2026");
  CHECK_FALSE(run::price_per_gpu_hour(root, "b200"));
  // No file at all: no price, no error (the cost columns are then left out).
  CHECK_FALSE(run::price_per_gpu_hour(root / "nowhere", "h100-sxm"));
}

TEST_CASE("a bad price table is refused naming file, line and field",
          "[run][compare][prices]") {
  SECTION("a price that is not positive") {
    const std::string p = problems_of(
        write_prices("negative", "[h100-sxm]\nusd_per_gpu_hour = -1.0\nsource = \"x\"\n"));
    CHECK(p.find("prices.toml:2: h100-sxm.usd_per_gpu_hour: must be > 0") != std::string::npos);
  }
  SECTION("a missing source") {
    const std::string p =
        problems_of(write_prices("nosource", "[h100-sxm]\nusd_per_gpu_hour = 2.0\n"));
    CHECK(p.find("h100-sxm.source") != std::string::npos);
  }
  SECTION("a price given as a string") {
    const std::string p = problems_of(
        write_prices("string", "[h100-sxm]\nusd_per_gpu_hour = \"2 USD\"\nsource = \"x\"\n"));
    CHECK(p.find("prices.toml:2: h100-sxm.usd_per_gpu_hour") != std::string::npos);
  }
  SECTION("a mistyped key") {
    const std::string p = problems_of(write_prices(
        "typo", "[h100-sxm]\nusd_per_gpu_hour = 2.0\nsource = \"x\"\nusd_per_gpu_hr = 3.0\n"));
    CHECK(p.find("prices.toml:4: h100-sxm.usd_per_gpu_hr") != std::string::npos);
  }
  SECTION("a table for a device that has no file") {
    const std::string p = problems_of(write_prices(
        "unknown", "[h100-sxm]\nusd_per_gpu_hour = 2.0\nsource = \"x\"\n"
                   "[h100-sxn]\nusd_per_gpu_hour = 2.0\nsource = \"x\"\n"));
    CHECK(p.find("prices.toml:4: h100-sxn: no device 'h100-sxn'") != std::string::npos);
  }
}
