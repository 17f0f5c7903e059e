#include "sim/cost/calibration_tables.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

using namespace vramsim;
using namespace vramsim::calibration;

namespace {

const CalibrationTables& fixture_tables() {
  static const CalibrationTables t(testing::fixture_profile(), testing::fixture_device());
  return t;
}

Duration seconds_of(double s) { return Duration::from_seconds(s); }

const GemmRecord& gemm_record(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const GemmRecord& r : testing::fixture_profile().gemms) {
    if (r.m == m && r.n == n && r.k == k) return r;
  }
  FAIL("no such fixture gemm");
  return testing::fixture_profile().gemms.front();
}

}  // namespace

TEST_CASE("log-log interpolation passes through its points and stays inside them",
          "[hardware][calibration]") {
  const std::vector<double> xs = {1, 10, 100, 1000};
  const std::vector<double> ys = {2e-6, 3e-6, 3e-5, 2.9e-4};
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(interpolate_log_log(xs, ys, xs[i]) == ys[i]);
  CHECK_FALSE(interpolate_log_log(xs, ys, 0.5).has_value());
  CHECK_FALSE(interpolate_log_log(xs, ys, 1001).has_value());
  CHECK_FALSE(interpolate_log_log({}, {}, 1).has_value());
  // A power law between points is reproduced: y = 3e-6 * (x / 10) from 10 to 100.
  CHECK(*interpolate_log_log(xs, ys, 31.6227766) == Approx(3e-6 * 3.16227766));
  double previous = 0;
  for (double x = 1; x <= 1000; x *= 1.05) {
    const double y = *interpolate_log_log(xs, ys, x);
    CHECK(y >= previous);
    previous = y;
  }
}

TEST_CASE("bilinear log interpolation is exact on the grid and refuses missing cells",
          "[hardware][calibration]") {
  const std::vector<double> xs = {1, 4}, ys = {10, 100};
  std::vector<double> z = {1.0, 2.0, 3.0, 6.0};
  CHECK(interpolate_log_bilinear(xs, ys, z, 1, 10) == 1.0);
  CHECK(interpolate_log_bilinear(xs, ys, z, 4, 100) == 6.0);
  CHECK(*interpolate_log_bilinear(xs, ys, z, 2, 10) == Approx(std::sqrt(3.0)));
  CHECK_FALSE(interpolate_log_bilinear(xs, ys, z, 8, 10).has_value());
  z[3] = std::nan("");
  CHECK_FALSE(interpolate_log_bilinear(xs, ys, z, 2, 50).has_value());
  CHECK(interpolate_log_bilinear(xs, ys, z, 1, 10) == 1.0);
}

TEST_CASE("every measured GEMM is returned exactly, marked measured", "[hardware][calibration]") {
  for (const GemmRecord& r : testing::fixture_profile().gemms) {
    const TimeEstimate e = fixture_tables().gemm_time(DType::kBf16, r.m, r.n, r.k);
    CHECK(e.time == seconds_of(r.timing.median_s));
    CHECK(e.basis == Basis::kMeasured);
  }
}

TEST_CASE("a GEMM between measured token counts is interpolated monotonically",
          "[hardware][calibration]") {
  const double lo = gemm_record(64, 14336, 4096).timing.median_s;
  const double hi = gemm_record(512, 14336, 4096).timing.median_s;
  Duration previous = seconds_of(lo);
  for (std::int64_t m = 65; m < 512; m += 7) {
    const TimeEstimate e = fixture_tables().gemm_time(DType::kBf16, m, 14336, 4096);
    CHECK(e.basis == Basis::kInterpolated);
    CHECK(e.time >= previous);
    CHECK(e.time <= seconds_of(hi));
    previous = e.time;
  }
}

TEST_CASE("a GEMM outside the measured range falls back to the datasheet and says so",
          "[hardware][calibration]") {
  const TimeEstimate big = fixture_tables().gemm_time(DType::kBf16, 32768, 4096, 4096);
  CHECK(big.fallback());
  // 2 m n k / (989.4 TFLOP/s x 0.70): compute-bound.
  CHECK(big.time == seconds_of(2.0 * 32768.0 * 4096.0 * 4096.0 / (989.4e12 * 0.70)));
  CHECK(fixture_tables().gemm_time(DType::kFp8, 64, 4096, 4096).fallback());
  CHECK_FALSE(fixture_tables().gemm_time(DType::kBf16, 16384, 4096, 4096).fallback());
}

TEST_CASE("an unmeasured GEMM shape is the nearest measured shape scaled by n k",
          "[hardware][calibration]") {
  // (8192, 4096): nearest is TP 2's gate (7168, 4096): |ln 8192/7168| = 0.13, less than 0.56 to
  // (14336, 4096) and ln 2 to (4096, 4096).
  const TimeEstimate e = fixture_tables().gemm_time(DType::kBf16, 512, 8192, 4096);
  CHECK(e.basis == Basis::kScaled);
  CHECK(e.time.seconds() ==
        Approx(gemm_record(512, 7168, 4096).timing.median_s * 8192.0 / 7168.0).margin(1e-9));
}

TEST_CASE("decode attention is exact on the grid, monotone between, scaled for other heads",
          "[hardware][calibration]") {
  const AttentionShape llama8b = attention_shape(32, 8, 128, DType::kBf16);
  for (const DecodeAttentionRecord& r : testing::fixture_profile().decode_attention) {
    const TimeEstimate e = fixture_tables().decode_attention_time(
        r.batch, static_cast<double>(r.context), llama8b);
    CHECK(e.time == seconds_of(r.timing.median_s));
    CHECK(e.basis == Basis::kMeasured);
  }
  Duration previous;
  for (double context = 512; context <= 2048; context *= 1.1) {
    const TimeEstimate e = fixture_tables().decode_attention_time(16, context, llama8b);
    CHECK(e.time >= previous);
    previous = e.time;
  }
  // TP 2 halves the heads on a device: half the KV bytes, half the time of the grid.
  const TimeEstimate tp2 =
      fixture_tables().decode_attention_time(64, 2048, attention_shape(16, 4, 128, DType::kBf16));
  CHECK(tp2.basis == Basis::kScaled);
  CHECK(tp2.time.seconds() ==
        Approx(fixture_tables().decode_attention_time(64, 2048, llama8b).time.seconds() / 2.0)
            .margin(1e-9));
  CHECK(fixture_tables().decode_attention_time(64, 65536, llama8b).fallback());
}

TEST_CASE("prefill attention is exact at measured lengths and falls back beyond",
          "[hardware][calibration]") {
  for (const PrefillAttentionRecord& r : testing::fixture_profile().prefill_attention) {
    const auto s = static_cast<double>(r.seq_len);
    const TimeEstimate e =
        fixture_tables().prefill_attention_time(s * (s + 1) / 2, 32, 128, DType::kBf16);
    CHECK(e.time == seconds_of(r.timing.median_s));
    CHECK(e.basis == Basis::kMeasured);
  }
  CHECK(fixture_tables().prefill_attention_time(100.0 * 101 / 2, 32, 128, DType::kBf16)
            .fallback());
}

TEST_CASE("collectives interpolate by size per rank count, and other counts are not measured",
          "[hardware][calibration]") {
  for (const CollectiveRecord& r : testing::fixture_profile().collectives) {
    const auto e = fixture_tables().collective_time(r.op, Bytes(r.bytes), r.num_ranks);
    REQUIRE(e.has_value());
    CHECK(e->time == seconds_of(r.timing.median_s));
  }
  CHECK(fixture_tables().collective_time(CollectiveOp::kAllReduce, MiB(3), 8)->basis ==
        Basis::kInterpolated);
  CHECK_FALSE(fixture_tables().collective_time(CollectiveOp::kAllReduce, MiB(1), 4));
  CHECK_FALSE(fixture_tables().collective_time(CollectiveOp::kAllReduce, GiB(2), 8));
}

TEST_CASE("copies interpolate by size and fall back to the sheet outside",
          "[hardware][calibration]") {
  CHECK(fixture_tables().copy_time(CopyKind::kDeviceKernel, MiB(64)).basis == Basis::kMeasured);
  const TimeEstimate big = fixture_tables().copy_time(CopyKind::kDeviceKernel, GiB(4));
  CHECK(big.fallback());
  CHECK(big.time == seconds_of(2.0 * 4 * 1073741824.0 / (3.35e12 * 0.85)));
  const TimeEstimate h2d = fixture_tables().copy_time(CopyKind::kHostToDevicePinned, GiB(4));
  CHECK(h2d.time == seconds_of(4 * 1073741824.0 / 64e9));
  const auto bw = fixture_tables().largest_copy_bandwidth(CopyKind::kDeviceKernel);
  REQUIRE(bw.has_value());
  CHECK(bw->bytes_per_second() == Approx(2.0 * 1073741824.0 / (5e-6 + 2.0 * 1073741824.0 / 2.9e12)).epsilon(1e-3));
}

TEST_CASE("records that failed their correctness check are ignored", "[hardware][calibration]") {
  CalibrationProfile p = testing::fixture_profile();
  for (GemmRecord& r : p.gemms) {
    if (r.n == 4096 && r.k == 4096) r.check = CheckOutcome::kFailed;
  }
  const CalibrationTables t(p, testing::fixture_device());
  CHECK(t.gemm_time(DType::kBf16, 64, 4096, 4096).basis == Basis::kScaled);
}
