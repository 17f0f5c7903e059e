#include "sim/serving/calibrated_time_model.hpp"

#include <filesystem>
#include <string>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;

namespace {

const std::filesystem::path kRoot = VRAMSIM_SOURCE_ROOT;

const calibration::CalibrationProfile& profile() {
  static const calibration::CalibrationProfile p = calibration::load_calibration_profile(
      kRoot / "tests/hardware/data/h100_fixture_profile.json");
  return p;
}

CalibratedTimeModel make_llama8b(int tp) {
  static const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models");
  static const hardware::DeviceSpec dev = io::find_device("h100-sxm", kRoot / "topologies");
  return CalibratedTimeModel(spec, dev, {tp, 1}, model::WeightFormat{}, DType::kBf16, profile());
}

// The fixture's median for a GEMM (exactly one record per shape and m).
double gemm_s(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const auto& r : profile().gemms) {
    if (r.m == m && r.n == n && r.k == k) return r.timing.median_s;
  }
  FAIL("no fixture GEMM " << m << " x " << n << " x " << k);
  return 0;
}

// Llama-3.1-8B's matmuls of one layer at TP 1 for m tokens: q, k, v, o, gate, up, down.
double layer_gemms_s(std::int64_t m) {
  return gemm_s(m, 4096, 4096) + 2 * gemm_s(m, 1024, 4096) + gemm_s(m, 4096, 4096) +
         2 * gemm_s(m, 14336, 4096) + gemm_s(m, 4096, 14336);
}

}  // namespace

TEST_CASE("a calibrated prefill step at measured shapes equals the fixture's times",
          "[serving][calibration]") {
  const CalibratedTimeModel model = make_llama8b(1);
  BatchShape batch;
  batch.prefills.push_back({512, 0});
  const CalibratedStepDetail d = model.step_detail(batch);
  CHECK(d.num_fallbacks == 0);
  // 32 layers of GEMMs at m = 512 and the lm_head for one logit row.
  CHECK(d.time.linear ==
        Duration::from_seconds(32 * layer_gemms_s(512) + gemm_s(1, 128256, 4096)));
  // Causal prefill of 512 tokens, 32 query heads of 128, once per layer.
  CHECK(d.time.attention ==
        Duration::from_seconds(32 * profile().prefill_attention[1].timing.median_s));
  CHECK(d.time.communication == Duration::zero());
  CHECK(d.time.overhead == microseconds(500) + microseconds(5));
  CHECK(d.time.total == d.time.linear + d.time.attention + d.time.overhead);
  CHECK(model.step_time(batch).total == d.time.total);
}

TEST_CASE("a calibrated decode step reads the decode grid at its batch and context",
          "[serving][calibration]") {
  const CalibratedTimeModel model = make_llama8b(1);
  BatchShape batch;
  batch.num_decodes = 64;
  batch.decode_context_tokens = 64 * 2048;
  const CalibratedStepDetail d = model.step_detail(batch);
  CHECK(d.num_fallbacks == 0);
  CHECK(d.time.linear ==
        Duration::from_seconds(32 * layer_gemms_s(64) + gemm_s(64, 128256, 4096)));
  double grid = 0;
  for (const auto& r : profile().decode_attention) {
    if (r.batch == 64 && r.context == 2048) grid = r.timing.median_s;
  }
  CHECK(d.time.attention == Duration::from_seconds(32 * grid));
}

TEST_CASE("tensor parallelism uses the measured all-reduce for its rank count",
          "[serving][calibration]") {
  const CalibratedTimeModel model = make_llama8b(2);
  BatchShape batch;
  batch.num_decodes = 8;
  batch.decode_context_tokens = 8 * 512;
  const CalibratedStepDetail d = model.step_detail(batch);
  CHECK_FALSE(d.communication_fallback);
  const auto ar = model.tables().collective_time(calibration::CollectiveOp::kAllReduce,
                                                 Bytes(8 * 4096 * 2), 2);
  REQUIRE(ar.has_value());
  CHECK(d.time.communication == (2 * 32) * ar->time);
  // The fixture's decode grid has the TP 1 heads; TP 2 scales it, which is not a fallback.
  CHECK_FALSE(d.attention_fallback);
}

TEST_CASE("a step beyond the measured range falls back to the datasheet and says so",
          "[serving][calibration]") {
  const CalibratedTimeModel model = make_llama8b(1);
  BatchShape batch;
  batch.prefills.push_back({32768, 0});
  const CalibratedStepDetail d = model.step_detail(batch);
  CHECK(d.linear_fallback);         // m = 32768 > the largest measured 16384
  CHECK_FALSE(d.attention_fallback);  // a causal 32768 was measured
  // Four distinct layer GEMM shapes (q/o, k/v, gate/up share one); lm_head (m = 1) is measured.
  CHECK(d.num_fallbacks == 4);
  CHECK(model.describe().find("SYNTHETIC") != std::string::npos);
  CHECK(model.describe().find("h100_fixture_profile.json") != std::string::npos);
}

TEST_CASE("the calibrated model stays near the roofline where the fixture follows it",
          "[serving][calibration]") {
  // The fixture's GEMMs are a roofline at 700 TFLOP/s and 2.9 TB/s (0.71 and 0.87 of the
  // sheet), the defaults' 0.70 and 0.85: a large prefill's linear time agrees within 5 %.
  const CalibratedTimeModel calibrated = make_llama8b(1);
  const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models");
  const hardware::DeviceSpec dev = io::find_device("h100-sxm", kRoot / "topologies");
  const RooflineTimeModel roofline(spec, dev, {1, 1}, model::WeightFormat{}, DType::kBf16);
  BatchShape batch;
  batch.prefills.push_back({4096, 0});
  CHECK(calibrated.step_time(batch).linear.seconds() ==
        Approx(roofline.step_time(batch).linear.seconds()).epsilon(0.05));
}
