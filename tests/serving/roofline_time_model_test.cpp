// The datasheet roofline step-time model against closed forms computed here from the same
// inputs (model helpers, device sheet, collective model), to the nanosecond.
#include "sim/serving/roofline_time_model.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "sim/comm/collective.hpp"
#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/flop_count.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_bytes.hpp"
#include "tests/catch.hpp"

namespace vramsim::serving {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, kRoot / "scenarios" / "models");
}
hardware::DeviceSpec device(const std::string& id) {
  return io::find_device(id, kRoot / "topologies");
}

RooflineTimeModel make(const model::ModelSpec& spec, const hardware::DeviceSpec& dev,
                       model::Parallelism par = {}, RooflineOptions options = {}) {
  return RooflineTimeModel(spec, dev, par, model::WeightFormat{}, DType::kBf16, options);
}

BatchShape decodes(std::int64_t n, std::int64_t context_each) {
  BatchShape b;
  b.num_decodes = n;
  b.decode_context_tokens = n * context_each;
  return b;
}

BatchShape prefill(std::int64_t tokens, std::int64_t context = 0) {
  BatchShape b;
  b.prefills.push_back({tokens, context});
  return b;
}

Duration seconds_of(double s) { return Duration::from_seconds(s); }

// |a - b| <= 1 ns: the model sums a few doubles in another order before rounding.
bool within_1ns(Duration a, Duration b) {
  return std::llabs(a.nanoseconds() - b.nanoseconds()) <= 1;
}

bool parts_add_up(const StepTime& t) {
  return t.linear + t.attention + t.communication + t.kernel_gaps + t.overhead == t.total;
}

// Datasheet figures of h100-sxm.toml with the default efficiencies.
constexpr double kH100Bf16 = 989.4e12;
constexpr double kH100Bw = 3.35e12;
const RooflineOptions kDefaults{};

TEST_CASE("a batch-1 decode of Llama-3.1-8B on H100 reads every weight once", "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const RooflineTimeModel m = make(llama, device("h100-sxm"));
  const StepTime t = m.step_time(decodes(1, 1));

  // Weight bytes read: everything but the embedding table (a lookup of one row).
  const Bytes weights = model::weight_bytes_on_stage(llama, model::WeightFormat{}, {}, 0);
  const Bytes embedding(model::count_params(llama).embedding * 2);
  const double bw = kH100Bw * kDefaults.memory_efficiency;
  CHECK(m.weight_bytes_read(1, 1, 0) == weights - embedding);
  // Each GEMM kernel's fixed 4.7 us: 4 per layer (QKV, output, gate/up, down) and the lm_head.
  const double gemm_fixed = (32 * 4 + 1) * 4.7e-6;
  CHECK(within_1ns(t.linear, seconds_of(static_cast<double>((weights - embedding).count()) / bw +
                                        gemm_fixed)));

  // Attention: one cached token's KV (128 KiB over 32 layers) at the decode efficiency.
  const Bytes kv = model::kv_bytes_per_token(llama, DType::kBf16);
  CHECK(kv == KiB(128));
  const double kv_bw = kH100Bw * kDefaults.decode_attention_efficiency;
  CHECK(t.attention == seconds_of(static_cast<double>(kv.count()) / kv_bw));
  CHECK(t.communication == Duration::zero());
  CHECK(t.overhead == kDefaults.step_overhead + kDefaults.per_sequence_overhead);
  // Kernel gaps: 32 dense layers of 10 kernels at TP 1, 1.3 us each, and the 6 of them that
  // are neither GEMMs nor all-reduces (2 norms, rotary, KV write, attention, activation) at
  // least 3 us each.
  CHECK(t.kernel_gaps == Duration::from_nanoseconds(32 * (10 * 1'300 + 6 * 3'000)));
  CHECK(t.total == t.linear + t.attention + t.kernel_gaps + t.overhead);
  CHECK(t.stage_interval == t.total);
}

TEST_CASE("a batch-1 Llama-3-8B decode on H100 takes about the ~5 ms vLLM reports",
          "[serving][cost]") {
  // Loose sanity check, not a fit. Source: vLLM blog "vLLM V1: A Major Upgrade to vLLM's Core
  // Architecture" (blog.vllm.ai, 2025-01-24), sec. 1: for "Llama-8B running on NVIDIA H100
  // GPUs ... execution time on the GPU is as low as ~5ms".
  const RooflineTimeModel m = make(zoo("meta-llama/Llama-3.1-8B"), device("h100-sxm"));
  const StepTime t = m.step_time(decodes(1, 1000));
  const double gpu_ms = (t.total - t.overhead).seconds() * 1e3;
  CHECK(gpu_ms > 4.0);
  CHECK(gpu_ms < 7.0);
}

TEST_CASE("a 4096-token prefill of Llama-3.1-8B on H100 is compute bound", "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const RooflineTimeModel m = make(llama, device("h100-sxm"));
  const StepTime t = m.step_time(prefill(4096));

  const model::TokenFlops per_token = model::flops_per_token(llama, 0);
  const double rate = kH100Bf16 * kDefaults.matmul_efficiency;
  const double bw = kH100Bw * kDefaults.memory_efficiency;
  // The decoder's matmuls at the compute roof; lm_head for one logit row at the memory roof.
  const double layers = per_token.linear.count() * 4096.0 / rate;
  const double lm_head_bytes = 128256.0 * 4096.0 * 2.0;
  CHECK(per_token.lm_head.count() / rate < lm_head_bytes / bw);
  const double gemm_fixed = (32 * 4 + 1) * 4.7e-6;  // 4.7 us in each GEMM kernel
  CHECK(within_1ns(t.linear, seconds_of(layers + lm_head_bytes / bw + gemm_fixed)));
  CHECK(t.linear > milliseconds(80));
  CHECK(t.attention < t.linear);
}

TEST_CASE("a prefill chunk after cached context attends n*c + n(n+1)/2 tokens per layer",
          "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const RooflineTimeModel m = make(llama, device("h100-sxm"));
  const std::int64_t n = 512, c = 3584;
  const StepTime t = m.step_time(prefill(n, c));

  const double attended = static_cast<double>(n * c + n * (n + 1) / 2);
  const double flops = 32.0 * 4.0 * 32.0 * 128.0 * attended;  // layers * 4 * heads * head_dim
  // The same number from flop_count.hpp: a chunk's FLOPs minus its matmuls and one logit row.
  const model::TokenFlops per_token = model::flops_per_token(llama, 0);
  const double helper = model::prefill_flops(llama, n, c).count() -
                        static_cast<double>(n) * per_token.linear.count() -
                        per_token.lm_head.count();
  CHECK(flops == Approx(helper).epsilon(1e-12));
  const double cached_kv = 32.0 * 4096.0 * static_cast<double>(c);  // 4 KiB per token per layer
  const double expected = std::max(flops / (kH100Bf16 * kDefaults.prefill_attention_efficiency),
                                   cached_kv / (kH100Bw * kDefaults.memory_efficiency));
  CHECK(t.attention == seconds_of(expected));
  CHECK(parts_add_up(t));
}

TEST_CASE("decode attention grows linearly with the tokens attended", "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const RooflineTimeModel m = make(llama, device("h100-sxm"));
  const double kv_bw = kH100Bw * kDefaults.decode_attention_efficiency;
  for (std::int64_t context : {1000, 2000, 4000, 8000}) {
    const StepTime t = m.step_time(decodes(64, context));
    const double bytes = 131072.0 * 64.0 * static_cast<double>(context);
    CHECK(t.attention == seconds_of(bytes / kv_bw));
  }
  const Duration a1 = m.step_time(decodes(64, 1000)).total;
  const Duration a2 = m.step_time(decodes(64, 2000)).total;
  const Duration a3 = m.step_time(decodes(64, 3000)).total;
  CHECK(within_1ns(a3 - a2, a2 - a1));
}

TEST_CASE("a sliding-window layer reads at most its window per decode", "[serving][cost]") {
  const model::ModelSpec mistral = zoo("mistralai/Mistral-7B-v0.1");  // window 4096, all layers
  const RooflineTimeModel m = make(mistral, device("h100-sxm"));
  CHECK(m.step_time(decodes(4, 10000)).attention == m.step_time(decodes(4, 4096)).attention);
  CHECK(m.step_time(decodes(4, 2000)).attention < m.step_time(decodes(4, 4096)).attention);
  // A chunk after 8000 cached tokens attends 4096 tokens per position.
  const double flops = 32.0 * 4.0 * 32.0 * 128.0 * 4096.0 * 512.0;
  const double cached = 32.0 * 4096.0 * 4096.0;
  CHECK(m.step_time(prefill(512, 8000)).attention ==
        seconds_of(std::max(flops / (kH100Bf16 * kDefaults.prefill_attention_efficiency),
                            cached / (kH100Bw * kDefaults.memory_efficiency))));
}

TEST_CASE("tensor parallelism adds two all-reduces per layer of the step's activations",
          "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const hardware::DeviceSpec h100 = device("h100-sxm");
  const RooflineTimeModel m = make(llama, h100, {2, 1});
  const StepTime t = m.step_time(decodes(8, 1024));
  const Duration one = comm::collective_time(comm::Collective::kAllReduce, Bytes(8 * 4096 * 2), 2,
                                             comm::intra_node_link(h100));
  CHECK(t.communication == (2 * 32) * one);
  CHECK(parts_add_up(t));
  // Each rank reads half of the sharded weights (the embedding and lm_head split by vocab).
  const Bytes half = model::weight_bytes_on_stage(llama, model::WeightFormat{}, {2, 1}, 0) -
                     Bytes(model::count_params(llama).embedding);
  CHECK(m.weight_bytes_read(8, 8, 0) == half);
}

TEST_CASE("TP=2 behind PCIe pays far more for all-reduces than over NVLink",
          "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const BatchShape batch = decodes(8, 1024);
  const StepTime nvlink = make(llama, device("h100-sxm"), {2, 1}).step_time(batch);
  const StepTime pcie = make(llama, device("rtx-4090"), {2, 1}).step_time(batch);
  CHECK(pcie.communication.nanoseconds() > 2 * nvlink.communication.nanoseconds());
  // 64 all-reduces of 64 KiB: PCIe Gen4 (32 GB/s, 2 us a hop) costs > 0.3 ms.
  CHECK(pcie.communication > microseconds(300));
}

TEST_CASE("with two pipeline stages a batch enters every stage_interval and takes total",
          "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  const hardware::DeviceSpec h100 = device("h100-sxm");
  const RooflineTimeModel pp1 = make(llama, h100);
  const RooflineTimeModel pp2 = make(llama, h100, {1, 2});
  const BatchShape batch = decodes(32, 2048);
  const StepTime one = pp1.step_time(batch);
  const StepTime two = pp2.step_time(batch);

  const Duration p2p = comm::collective_time(comm::Collective::kSendRecv,
                                             Bytes(2 * 32 * 4096 * 2), 2,
                                             comm::intra_node_link(h100));
  CHECK(two.communication == p2p);
  CHECK(parts_add_up(two));
  // The stages split the same work: their sum equals the single stage's, up to rounding.
  CHECK(std::llabs((two.linear + two.attention - one.linear - one.attention).nanoseconds()) <= 2);
  CHECK(two.kernel_gaps == one.kernel_gaps);
  CHECK(two.stage_interval < two.total);
  CHECK(two.stage_interval - two.overhead >= Duration::from_nanoseconds(
                                                 (two.linear + two.attention).nanoseconds() / 2));
  CHECK(two.stage_interval - two.overhead < two.linear + two.attention);
}

TEST_CASE("an MoE step computes only the top-k experts and reads the experts it touches",
          "[serving][cost]") {
  const model::ModelSpec qwen = zoo("Qwen/Qwen3-30B-A3B");  // 128 experts, top-8, 48 layers
  const hardware::DeviceSpec h100 = device("h100-sxm");
  const RooflineTimeModel m = make(qwen, h100);

  CHECK(expected_experts_touched(128, 8, 0) == 0.0);
  CHECK(expected_experts_touched(128, 8, 1) == Approx(8.0));
  const double miss = 120.0 / 128.0;  // a token leaves 120 of 128 experts alone
  CHECK(expected_experts_touched(128, 8, 2) == Approx(128.0 * (1.0 - miss * miss)));
  CHECK(expected_experts_touched(128, 8, 100000) == 128.0);

  const Bytes all = model::weight_bytes_on_stage(qwen, model::WeightFormat{}, {}, 0) -
                    Bytes(model::count_params(qwen).embedding * 2);
  Bytes previous;
  for (std::int64_t tokens : {1, 2, 8, 64}) {
    const Bytes read = m.weight_bytes_read(tokens, 1, 0);
    CHECK(read > previous);
    CHECK(read < all);
    previous = read;
  }
  // 512 tokens leave (15/16)^512 ~ 5e-15 of the experts untouched: every expert is read.
  CHECK(m.weight_bytes_read(512, 1, 0) == all);
  CHECK(m.weight_bytes_read(100000, 1, 0) == all);

  // A 4096-token prefill costs far less than the same FLOPs with every expert active.
  const model::ParamCount params = model::count_params(qwen);
  const double dense_equivalent =
      2.0 * static_cast<double>(params.total - params.embedding) * 4096.0 /
      (kH100Bf16 * kDefaults.matmul_efficiency);
  const StepTime t = m.step_time(prefill(4096));
  CHECK(t.linear.seconds() < 0.25 * dense_equivalent);
  // A batch-1 decode reads the 8 experts a token uses of each layer, not all 128.
  CHECK(m.step_time(decodes(1, 100)).linear < m.step_time(decodes(64, 100)).linear);
}

TEST_CASE("linear, attention, communication and overhead add up to total", "[serving][cost]") {
  const model::ModelSpec llama = zoo("meta-llama/Llama-3.1-8B");
  BatchShape mixed = decodes(100, 1500);
  mixed.prefills = {{256, 0}, {1024, 2048}, {7, 90}};
  for (model::Parallelism par : {model::Parallelism{1, 1}, model::Parallelism{2, 1},
                                 model::Parallelism{4, 1}, model::Parallelism{2, 2}}) {
    const StepTime t = make(llama, device("h100-sxm"), par).step_time(mixed);
    CHECK(parts_add_up(t));
    CHECK(t.overhead == kDefaults.step_overhead + 103 * kDefaults.per_sequence_overhead);
    CHECK(t.stage_interval <= t.total);
  }
}

TEST_CASE("the roofline model describes its datasheet and efficiencies", "[serving][cost]") {
  const RooflineTimeModel m = make(zoo("meta-llama/Llama-3.1-8B"), device("h100-sxm"));
  CHECK(m.describe() ==
        "roofline: NVIDIA H100 SXM5 80GB datasheet (989 TFLOP/s bf16 x 0.70, 3350 GB/s x 0.85, "
        "1.3 us between kernels, 4.7 us in each GEMM kernel, 3 us per small kernel)");
  const auto fp8 = make_roofline_time_model(zoo("meta-llama/Llama-3.1-8B"), device("h100-sxm"),
                                            {}, model::make_weight_format(DType::kBf16, "fp8"),
                                            DType::kBf16);
  CHECK(fp8->describe() ==
        "roofline: NVIDIA H100 SXM5 80GB datasheet (1979 TFLOP/s fp8 x 0.70, 3350 GB/s x 0.85, "
        "1.3 us between kernels, 4.7 us in each GEMM kernel, 3 us per small kernel)");
}

TEST_CASE("roofline options out of range are reported with their field", "[serving][cost]") {
  RooflineOptions bad;
  bad.matmul_efficiency = 1.5;
  bad.decode_attention_efficiency = 0.0;
  bad.step_overhead = Duration::from_nanoseconds(-1);
  bad.gemm_kernel_fixed = Duration::from_nanoseconds(-1);
  ValidationReport report;
  bad.validate(report, "roofline");
  REQUIRE(report.problems().size() == 4);
  CHECK(report.problems()[0].field == "roofline.matmul_efficiency");
  CHECK(report.problems()[1].field == "roofline.decode_attention_efficiency");
  CHECK(report.problems()[2].field == "roofline.step_overhead");
  CHECK(report.problems()[3].field == "roofline.gemm_kernel_fixed");
  CHECK_THROWS_AS(make(zoo("meta-llama/Llama-3.1-8B"), device("h100-sxm"), {}, bad), ConfigError);
  CHECK_THROWS_AS(make(zoo("meta-llama/Llama-3.1-8B"), device("h100-sxm"), {3, 1}), ConfigError);
}

}  // namespace
}  // namespace vramsim::serving
