// FlashAttention 2's mixed prefill + decode steps (sim/serving/mixed_batch_attention.hpp) and
// the Hopper MXFP4 experts' kernel rate (cost::kHopperMarlinMoeEfficiency, ...MatmulOgs...),
// against hand-computed cases.
#include "sim/serving/mixed_batch_attention.hpp"

#include <filesystem>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "tests/catch.hpp"

namespace vramsim::serving {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

model::ModelSpec llama8b() {
  return model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models");
}

hardware::DeviceSpec device(const char* id) { return io::find_device(id, kRoot / "topologies"); }

}  // namespace

TEST_CASE("decodes beside a prefill chunk cost FlashAttention 2's blocks and reread KV",
          "[serving][cost]") {
  const model::ModelSpec spec = llama8b();  // 32 query heads, 8 KV heads
  const RooflineOptions options;
  const auto pro6000 = MixedBatchDecode::for_device(spec, device("rtx-pro-6000"), {}, options);
  REQUIRE(pro6000.has_value());
  // Groups of 4 query heads per KV head: 1 + 3 x 0.20 of the KV bytes.
  CHECK(pro6000->kv_factor() == Approx(1.6));
  // 128 decodes beside a 2,048-token chunk on 188 SMs: 16 query tiles of 128 at 0.70 us, and
  // the decode's own block at 3.0 us, for each of 128 x 32 (decode, head) pairs over 188 SMs.
  CHECK(pro6000->block_seconds(128, 2048) ==
        Approx(128.0 * 32.0 / 188.0 * (16.0 * 0.70e-6 + 3.0e-6)));
  // A 129-token chunk takes two query tiles.
  CHECK(pro6000->block_seconds(1, 129) == Approx(32.0 / 188.0 * (2.0 * 0.70e-6 + 3.0e-6)));
  // TP 2 halves the heads on a device; the group stays 4.
  const auto tp2 = MixedBatchDecode::for_device(spec, device("rtx-pro-6000"), {2, 1}, options);
  CHECK(tp2->block_seconds(128, 2048) == Approx(pro6000->block_seconds(128, 2048) / 2.0));
  CHECK(tp2->kv_factor() == Approx(1.6));
  // FA2's parts only: Ada (8.9) yes; Hopper (FlashAttention 3) and datacenter Blackwell no.
  CHECK(MixedBatchDecode::for_device(spec, device("rtx-4090"), {}, options).has_value());
  CHECK(MixedBatchDecode::for_device(spec, device("a100-sxm-80g"), {}, options).has_value());
  CHECK_FALSE(MixedBatchDecode::for_device(spec, device("h100-sxm"), {}, options).has_value());
  CHECK_FALSE(MixedBatchDecode::for_device(spec, device("b200"), {}, options).has_value());
  RooflineOptions v0 = options;
  v0.fa2_mixed_batches = false;
  CHECK_FALSE(MixedBatchDecode::for_device(spec, device("rtx-pro-6000"), {}, v0).has_value());
}

TEST_CASE("the roofline charges a mixed step's decodes what FlashAttention 2 makes them cost",
          "[serving][cost]") {
  const model::ModelSpec spec = llama8b();
  const hardware::DeviceSpec gpu = device("rtx-pro-6000");
  RooflineOptions off;
  off.fa2_mixed_batches = false;
  const RooflineTimeModel with(spec, gpu, {}, model::WeightFormat{}, DType::kBf16);
  const RooflineTimeModel without(spec, gpu, {}, model::WeightFormat{}, DType::kBf16, off);
  BatchShape mixed;
  mixed.prefills.push_back({2048, 0});
  mixed.num_decodes = 128;
  mixed.decode_context_tokens = 128 * 4096;
  // Decode KV: 128 x 4,096 tokens x 32 layers x 8 heads x 128 x 2 (K, V) x 2 bytes, read at
  // 0.70 of 1,792 GB/s alone (its FLOPs at 0.5 of the peak take less), 1.6 times mixed.
  const double kv = 128.0 * 4096.0 * 32.0 * 8.0 * 128.0 * 2.0 * 2.0;
  const double read = kv / (1792e9 * 0.70);
  const double blocks = 32.0 * 128.0 * 32.0 / 188.0 * (16.0 * 0.70e-6 + 3.0e-6);
  const double extra = with.step_time(mixed).attention.seconds() -
                       without.step_time(mixed).attention.seconds();
  CHECK(extra == Approx(0.6 * read + blocks).epsilon(1e-6));
  // A pure decode step, or a prefill alone, costs the same either way.
  BatchShape decode = mixed;
  decode.prefills.clear();
  CHECK(with.step_time(decode).total == without.step_time(decode).total);
  BatchShape prefill = mixed;
  prefill.num_decodes = 0;
  prefill.decode_context_tokens = 0;
  CHECK(with.step_time(prefill).total == without.step_time(prefill).total);
}

TEST_CASE("MXFP4 experts on Hopper run at their kernel's measured share of the bf16 peak",
          "[serving][cost]") {
  const model::ModelSpec gptoss = model::load_model(
      (kRoot / "tests" / "validation" / "models" / "openai__gpt-oss-120b.json").string(),
      kRoot / "scenarios" / "models");
  const hardware::DeviceSpec h100 = device("h100-sxm");
  model::WeightFormat mxfp4;
  mxfp4.quantization = model::QuantMethod::kMxfp4;
  mxfp4.layout.experts_only = true;
  RooflineOptions marlin;
  marlin.mxfp4_triton_kernels = false;  // vLLM before 0.11.1
  const RooflineOptions triton;
  const RooflineTimeModel m(gptoss, h100, {}, mxfp4, DType::kBf16, marlin);
  const RooflineTimeModel t(gptoss, h100, {}, mxfp4, DType::kBf16, triton);
  CHECK_THAT(m.describe(), Catch::Contains("MXFP4 experts (Marlin) at 254 TFLOP/s"));
  CHECK_THAT(t.describe(), Catch::Contains("MXFP4 experts (matmul_ogs) at 485 TFLOP/s"));
  // An 8,192-token prefill is compute bound in the experts at either rate (61 GB of MXFP4
  // experts read in 21 ms against 120-230 ms of arithmetic), so the two models differ by the
  // experts' padded FLOPs at the two rates: 2 x top-4 x 36 layers x 3 x 2,880 x 2,880 a token.
  const model::MoeSpec& moe = *gptoss.moe;
  const double flops = 2.0 * static_cast<double>(moe.num_experts_per_tok) *
                       static_cast<double>(gptoss.num_layers) * 3.0 *
                       static_cast<double>(gptoss.hidden_size) *
                       static_cast<double>(moe.expert_intermediate_size) * 8192.0;
  BatchShape b;
  b.prefills.push_back({8192, 0});
  const double pad_marlin = moe_padding_factor(MoeKernel::kMarlin, 8192, 4, 128);
  const double pad_ogs = moe_padding_factor(MoeKernel::kMatmulOgs, 8192, 4, 128);
  const double peak = 989.4e12;  // h100-sxm.toml's dense bf16
  CHECK(m.step_time(b).linear.seconds() - t.step_time(b).linear.seconds() ==
        Approx(flops * (pad_marlin / (peak * 0.257) - pad_ogs / (peak * 0.49))).epsilon(1e-6));
  // On an A100 (Marlin, no fitted rate) the experts stay at the dense matmul efficiency.
  const RooflineTimeModel a100(gptoss, device("a100-sxm-80g"), {}, mxfp4, DType::kBf16, marlin);
  CHECK_THAT(a100.describe(), !Catch::Contains("MXFP4 experts"));
}

}  // namespace vramsim::serving
