#include "sim/cost/calibration_holdout.hpp"

#include <map>
#include <string>

#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

using namespace vramsim;
using namespace vramsim::calibration;

namespace {

GemmRecord gemm(std::int64_t m, double seconds) {
  GemmRecord r;
  r.dtype = "bf16";
  r.m = m;
  r.n = 1024;
  r.k = 1024;
  r.timing = {seconds, seconds, seconds, seconds, seconds, 1};
  r.check = CheckOutcome::kPassed;
  return r;
}

}  // namespace

TEST_CASE("a power law is predicted exactly from its neighbours", "[hardware][calibration]") {
  CalibrationProfile p;
  p.device_id = "h100-sxm";
  for (std::int64_t m : {1, 2, 4, 8, 16}) p.gemms.push_back(gemm(m, 1e-6 * static_cast<double>(m)));
  const HoldoutReport r = holdout_check(p, testing::fixture_device());
  REQUIRE(r.points.size() == 3);  // m = 2, 4, 8; the ends are never left out
  for (const HoldoutPoint& pt : r.points) {
    CHECK(pt.table == "gemm");
    CHECK(pt.relative_error() == Approx(0.0).margin(1e-9));
  }
  REQUIRE(r.summaries.size() == 1);
  CHECK(r.summaries[0].num_points == 3);
}

TEST_CASE("the held-out check covers every table of the fixture with bounded errors",
          "[hardware][calibration]") {
  const HoldoutReport r = holdout_check(testing::fixture_profile(), testing::fixture_device());
  std::map<std::string, HoldoutSummary> by_table;
  for (const HoldoutSummary& s : r.summaries) by_table[s.table] = s;
  // Interior points: 6 copy kinds x 4 sizes; 11 GEMM shapes x 4 m; 3 decode contexts x 5
  // batches; 3 prefill lengths; 14 collective series x 12 sizes.
  CHECK(by_table.at("copy").num_points == 24);
  CHECK(by_table.at("gemm").num_points == 44);
  CHECK(by_table.at("gemm-shape").num_points == 44);
  CHECK(by_table.at("decode").num_points == 15);
  CHECK(by_table.at("prefill").num_points == 3);
  CHECK(by_table.at("collective").num_points == 14 * 12);
  // The fixture is smooth, but its GEMM and prefill grids step x8 across the knee between
  // the bandwidth- and compute-bound regimes, where leaving a point out doubles the error.
  for (const auto& [name, s] : by_table) {
    INFO(name);
    CHECK(s.median_abs_relative_error <= s.max_abs_relative_error);
    CHECK(s.max_abs_relative_error < (name == "gemm-shape" ? 5.0 : 1.1));
  }
  CHECK(by_table.at("copy").max_abs_relative_error < 0.25);
  CHECK(by_table.at("collective").max_abs_relative_error < 0.5);
}
