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
  // What the profile does not measure, as the roofline charges it: per layer 10 kernels' gaps
  // of 1.3 us and the 5 element-wise kernels' 3 us (not the 4 GEMMs or the attention kernel).
  CHECK(d.time.kernel_gaps == 32 * (10 * Duration::from_nanoseconds(1'300) + 5 * microseconds(3)));
  CHECK(d.time.total ==
        d.time.linear + d.time.attention + d.time.kernel_gaps + d.time.overhead);
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

TEST_CASE("a calibrated mixed step adds FlashAttention 2's cost over the measured decode",
          "[serving][calibration]") {
  // The H100 fixture's tables on an RTX PRO 6000's sheet (a profile need not name the sheet's
  // device): FA2's mixed steps apply there, not on the H100 itself.
  const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models");
  const hardware::DeviceSpec pro6000 = io::find_device("rtx-pro-6000", kRoot / "topologies");
  const CalibratedTimeModel model(spec, pro6000, {1, 1}, model::WeightFormat{}, DType::kBf16,
                                  profile());
  BatchShape decode;
  decode.num_decodes = 64;
  decode.decode_context_tokens = 64 * 2048;
  BatchShape prefill;
  prefill.prefills.push_back({512, 0});
  BatchShape mixed = decode;
  mixed.prefills = prefill.prefills;
  // 32 layers x (64 decodes x 32 heads / 188 SMs x (4 tiles x 0.70 + 3.0) us, and 0.6 more of
  // the decodes' KV, 64 x 2,048 tokens x 8 heads x 128 x 2 x 2 bytes, at 0.70 of 1,792 GB/s).
  const double extra = 32.0 * (64.0 * 32.0 / 188.0 * (4.0 * 0.70e-6 + 3.0e-6) +
                               0.6 * 64.0 * 2048.0 * 4096.0 / (1792e9 * 0.70));
  CHECK(model.step_detail(mixed).time.attention.seconds() ==
        Approx(model.step_detail(decode).time.attention.seconds() +
               model.step_detail(prefill).time.attention.seconds() + extra)
            .epsilon(1e-6));
  CHECK_THAT(model.describe(), Catch::Contains("as FlashAttention 2 runs them"));
  CHECK_THAT(make_llama8b(1).describe(), !Catch::Contains("FlashAttention 2"));
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
