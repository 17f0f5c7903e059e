// The comparison behind `vramsim calibrate-report` (sim/run/calibration_report) on the H100
// fixture profile (tests/hardware/data/h100_fixture_profile.json, synthetic) against the H100
// SXM sheet: every section has rows, each fraction is measured over sheet, the GEMM sheet value
// is the dense peak of its dtype, and a missing profile is bad input naming the file.
#include "sim/run/calibration_report.hpp"

#include <string>

#include "sim/core/error.hpp"
#include "tests/catch.hpp"

namespace {

const std::string kFixture =
    std::string(VRAMSIM_SOURCE_ROOT) + "/tests/hardware/data/h100_fixture_profile.json";

}  // namespace

TEST_CASE("calibration_report compares the fixture profile with the H100 sheet",
          "[run][calibration]") {
  namespace run = vramsim::run;
  const run::CalibrationReport r = run::calibration_report(kFixture, VRAMSIM_SOURCE_ROOT);
  CHECK(r.profile.device_id == "h100-sxm");
  CHECK(r.device.id == "h100-sxm");
  CHECK_FALSE(r.copy.empty());
  CHECK_FALSE(r.gemm.empty());
  CHECK_FALSE(r.attention.empty());
  CHECK_FALSE(r.collectives.empty());
  CHECK_FALSE(r.holdout.summaries.empty());
  for (const auto* section : {&r.copy, &r.gemm, &r.attention, &r.collectives}) {
    for (const run::SheetRow& row : *section) {
      CHECK(row.measured > 0.0);
      CHECK((row.unit == "B/s" || row.unit == "FLOP/s"));
      if (row.datasheet > 0) {
        CHECK(row.fraction_of_datasheet() == row.measured / row.datasheet);
      } else {
        CHECK(row.fraction_of_datasheet() == 0.0);
      }
    }
  }
  // The first GEMM rows are the best of each dtype; bf16's sheet is the dense bf16 peak.
  const run::SheetRow* bf16 = nullptr;
  for (const run::SheetRow& row : r.gemm) {
    if (row.what == "bf16 best of all shapes") bf16 = &row;
  }
  REQUIRE(bf16 != nullptr);
  CHECK(bf16->datasheet ==
        vramsim::hardware::peak_flop_rate(r.device, vramsim::DType::kBf16).per_second());
  CHECK(bf16->measured <= bf16->datasheet);

  const nlohmann::ordered_json j = run::calibration_report_json(r, "p.json");
  CHECK(j["profile"] == "p.json");
  CHECK(j["device_id"] == "h100-sxm");
  CHECK(j["synthetic"] == true);
  CHECK(j["memory"]["datasheet_total_bytes"] == r.device.memory_total.count());
  CHECK(j["gemm"].size() == r.gemm.size());
  CHECK(j["gemm"][0]["fraction_of_datasheet"] == r.gemm[0].fraction_of_datasheet());
  CHECK(j["holdout"].size() == r.holdout.summaries.size());
}

TEST_CASE("calibration_report of a missing profile is bad input naming the file",
          "[run][calibration]") {
  try {
    (void)vramsim::run::calibration_report("/nonexistent/profile.json", VRAMSIM_SOURCE_ROOT);
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/profile.json") != std::string::npos);
  }
}
