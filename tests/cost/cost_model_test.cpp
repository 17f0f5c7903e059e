#include "sim/cost/cost_model.hpp"

#include "sim/cost/attention_classes.hpp"
#include "sim/cost/datasheet.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_options.hpp"
#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

namespace vramsim::cost {
namespace {

using calibration::Basis;

constexpr double kH100Bf16 = 989.4e12;  // topologies/devices/h100-sxm.toml, dense
constexpr double kH100Bw = 3.35e12;

TEST_CASE("serving, the calibration fallback and training share one set of constants",
          "[cost]") {
  const serving::RooflineOptions serving;
  const Efficiencies eff;
  CHECK(serving.matmul_efficiency == eff.matmul);
  CHECK(serving.memory_efficiency == eff.memory);
  CHECK(serving.prefill_attention_efficiency == eff.prefill_attention);
  CHECK(serving.decode_attention_efficiency == eff.decode_attention);
  CHECK(eff.memory == 0.85);  // the cited value (datasheet_constants.hpp)
}

TEST_CASE("without a profile every answer is the datasheet roofline", "[cost]") {
  const CostModel m(testing::fixture_device());
  CHECK(m.tables() == nullptr);
  CHECK(m.describe() == "datasheet roofline (h100-sxm)");
  SECTION("a large GEMM is compute-bound at 0.7 of the dense peak") {
    const TimeEstimate e = m.matmul(DType::kBf16, 4096, 4096, 4096);
    CHECK(e.basis == Basis::kDatasheet);
    CHECK(e.time.seconds() ==
          Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / (kH100Bf16 * 0.7)).margin(1e-9));
  }
  SECTION("a GEMV is bound by reading the matrix at 0.85 of the bandwidth") {
    const TimeEstimate e = m.matmul(DType::kBf16, 1, 4096, 4096);
    const double bytes = (4096.0 + 4096.0 * 4096.0 + 4096.0) * 2.0;
    CHECK(e.time.seconds() == Approx(bytes / (kH100Bw * 0.85)).margin(1e-9));
  }
  SECTION("memory-bound bytes and prefill attention") {
    CHECK(m.memory_bound(GB(1)).time.seconds() == Approx(1e9 / (kH100Bw * 0.85)).margin(1e-9));
    CHECK(m.memory_bound(Bytes(0)).time == Duration::zero());
    const TimeEstimate a = m.prefill_attention(
        {.attended_pairs = 1e6, .num_sequences = 2, .num_q_heads = 32, .head_dim = 128});
    CHECK(a.time.seconds() == Approx(4.0 * 32 * 128 * 1e6 / (kH100Bf16 * 0.5)).margin(1e-9));
  }
  SECTION("a collective is the alpha-beta model of its link") {
    const comm::LinkModel link = comm::intra_node_link(testing::fixture_device());
    const TimeEstimate e = m.collective(comm::Collective::kAllReduce, MiB(16), 8, link);
    CHECK(e.basis == Basis::kDatasheet);
    CHECK(e.time == comm::collective_time(comm::Collective::kAllReduce, MiB(16), 8, link));
  }
}

TEST_CASE("with the fixture profile measured shapes replace the datasheet", "[cost]") {
  const CostModel m(testing::fixture_device(), testing::fixture_profile());
  REQUIRE(m.tables() != nullptr);
  CHECK(m.describe().find("h100_fixture_profile.json") != std::string::npos);
  const TimeEstimate measured = m.matmul(DType::kBf16, 4096, 4096, 4096);
  CHECK(measured.basis == Basis::kMeasured);
  CHECK(m.matmul(DType::kBf16, 2048, 4096, 4096).basis == Basis::kInterpolated);
  CHECK(m.matmul(DType::kBf16, 4096, 6144, 4096).basis == Basis::kScaled);
  CHECK(m.matmul(DType::kBf16, 32768, 4096, 4096).basis == Basis::kDatasheet);
  CHECK(m.memory_bound(MiB(32)).basis == Basis::kMeasured);  // a 16 MiB device copy
  // Two sequences of 2048 tokens cost twice one measured sequence.
  const double pairs = 2048.0 * 2049.0 / 2.0;
  const TimeEstimate one = m.prefill_attention(
      {.attended_pairs = pairs, .num_sequences = 1, .num_q_heads = 32, .head_dim = 128});
  const TimeEstimate two = m.prefill_attention(
      {.attended_pairs = 2 * pairs, .num_sequences = 2, .num_q_heads = 32, .head_dim = 128});
  CHECK(one.basis == Basis::kMeasured);
  CHECK(two.time.seconds() == Approx(2.0 * one.time.seconds()).margin(1e-9));
}

TEST_CASE("basis counts add up per kind", "[cost]") {
  BasisCounts c;
  for (Basis b : {Basis::kMeasured, Basis::kScaled, Basis::kScaled, Basis::kDatasheet}) c.add(b);
  CHECK(c.measured == 1);
  CHECK(c.interpolated == 0);
  CHECK(c.scaled == 2);
  CHECK(c.datasheet == 1);
  CHECK(c.total() == 4);
}

TEST_CASE("attention classes group layers by sliding window per stage", "[cost]") {
  const model::ModelSpec spec = model::load_model(
      "google/gemma-2-9b-it", std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models");
  const AttentionClasses a = attention_classes(spec, DType::kBf16, {1, 2});
  REQUIRE(a.windows.size() == 2);
  CHECK(a.windows[0] == 0);
  CHECK(a.windows[1] == 4096);
  REQUIRE(a.stages.size() == 2);
  CHECK(a.stages[0].num_layers + a.stages[1].num_layers == spec.num_layers);
  const AttentionClass& global = a.stages[0].classes[0];
  CHECK(global.num_layers + a.stages[0].classes[1].num_layers ==
        static_cast<double>(a.stages[0].num_layers));
  CHECK(global.kv_bytes_per_layer_token() * global.num_layers == global.kv_bytes_per_token);
}

}  // namespace
}  // namespace vramsim::cost
