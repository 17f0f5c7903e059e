// The budget of a data-parallel MoE deployment, per device, against hand-computed figures:
// attention and dense weights replicated on every DP rank, routed experts divided over the EP
// group in contiguous ranges (vLLM's linear placement, determine_expert_map), and each DP
// rank's KV cache sized from its own free memory.
#include "sim/memory/budget.hpp"

#include <string>

#include "sim/memory/activation_profile.hpp"
#include "sim/model/model_zoo.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {

// topologies/devices/rtx-pro-6000.toml: 188 SMs, 97250 MiB as torch reports it.
constexpr int kRtxPro6000Sms = 188;
const Bytes kRtxPro6000Total = MiB(97250);

model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, std::string(VRAMSIM_SOURCE_ROOT) + "/scenarios/models");
}

// The engine settings of the shipped RTX PRO 6000 run (traces/vllm-bench/README.md).
memory::EngineConfig qwen3_moe_run(int dp, bool ep) {
  memory::EngineConfig c;
  c.max_model_len = 40960;
  c.max_num_seqs = 128;
  c.max_num_batched_tokens = 2048;
  c.weights = model::make_weight_format(DType::kBf16, "none");
  c.data_parallel_size = dp;
  c.enable_expert_parallel = ep;
  return c;
}

memory::RuntimeOverheads no_overheads() {
  memory::RuntimeOverheads o;
  o.source = "test";
  return o;
}

}  // namespace

TEST_CASE("Qwen3-30B-A3B at DP 2 with EP holds half the experts and its own KV cache per GPU",
          "[memory][budget][expert_parallel]") {
  const model::ModelSpec spec = zoo("Qwen/Qwen3-30B-A3B");
  const memory::EngineConfig cfg = qwen3_moe_run(2, true);
  ValidationReport report;
  memory::validate(cfg, spec, report);
  REQUIRE(report.ok());
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, kRtxPro6000Total, kRtxPro6000Sms, no_overheads());
  REQUIRE(r.devices.size() == 2);

  // Hand computation (config.json: 48 layers, hidden 2048, 32 query / 4 KV heads of 128,
  // 128 experts of moe_intermediate_size 768, top-8, vocab 151,936, untied lm_head), bf16:
  //   one expert of one layer: gate, up, down 3 * 2048 * 768 = 4,718,592 params = 9,437,184 B
  //   attention per layer: q 2048*4096 + k 2048*512 + v 2048*512 + o 4096*2048 = 18,874,368
  //   router 2048*128 = 262,144; norms 2048 + 2048 + q_norm 128 + k_norm 128 = 4,352
  //   dense params: 48 * 19,140,864 + embed 151,936*2048 + lm_head 151,936*2048 + norm 2048
  //               = 918,761,472 + 311,164,928 + 311,164,928 + 2,048 = 1,541,093,376
  //   (with 128 * 48 * 4,718,592 = 28,991,029,248 expert params: 30,532,122,624 in all, the
  //   config-derived total of scenarios/models/Qwen__Qwen3-30B-A3B.json)
  //   EP size 2 x 1 = 2: experts 0-63 on device 0, 64-127 on device 1
  //   experts per device 64 * 48 * 9,437,184 B                         = 28,991,029,248
  //   dense weights 1,541,093,376 * 2 B                                =  3,082,186,752
  //   rotary cache 40,960 positions * 128 * 2 B                        =     10,485,760
  //   the caching allocator's blocks (budget.cpp allocated_weight_bytes): embed_tokens and
  //   lm_head are 151,936 * 2048 * 2 B = 593.5 MiB each, and each holds a whole 594 MiB
  //   segment (0.5 MiB left is not split off), 2 * 524,288          =      1,048,576
  //   and each layer's q_norm and k_norm (128 * 2 B = 256 B) a 512 B block,
  //   48 * 2 * 256                                                     =         24,576
  //   weights per device                                                = 32,084,774,912
  constexpr std::int64_t kExpertBytes = 28'991'029'248;
  constexpr std::int64_t kWeights = 32'084'774'912;
  //   usable = 0.9 * 97250 MiB = 0.9 * 101,974,016,000                  = 91,776,614,400
  //   KV per token: 48 layers * 2 * 4 heads * 128 * 2 B = 98,304; one block of 16 tokens
  //   over the 48 layers (one group) = 1,572,864 B
  constexpr std::int64_t kUsable = 91'776'614'400;
  constexpr std::int64_t kBlockBytes = 1'572'864;
  const memory::ProfileBatch batch{2048, 128, 1, DType::kBf16, kRtxPro6000Sms,
                                   memory::SamplerKind::kTritonTopKTopP};
  const Bytes activation = memory::activation_peak_bytes(spec, batch, /*last_stage=*/true);
  for (int i = 0; i < 2; ++i) {
    const memory::DeviceBudget& d = r.devices[static_cast<std::size_t>(i)];
    INFO("device " << i);
    CHECK(d.device_index == i);
    CHECK(d.dp_rank == i);
    CHECK(d.tp_rank == 0);
    CHECK(d.num_local_experts == 64);
    CHECK(d.first_local_expert == 64 * i);
    CHECK(d.expert_weights == Bytes(kExpertBytes));
    CHECK(d.weights == Bytes(kWeights));
    CHECK(d.usable == Bytes(kUsable));
    CHECK(d.kv_bytes_per_token == Bytes(98'304));
    CHECK(d.kv_available == Bytes(kUsable - kWeights) - activation);
    CHECK(d.num_gpu_blocks == (kUsable - kWeights - activation.count()) / kBlockBytes);
  }
  // Each DP rank sizes its own cache; both hold the same here.
  CHECK(r.num_gpu_blocks == r.devices[0].num_gpu_blocks);
  CHECK(r.devices[0].kv_cache == Bytes(kBlockBytes * r.num_gpu_blocks));
  CHECK(r.fits);

  SECTION("one GPU holding every expert has 64 x 48 experts' bytes less KV memory") {
    const memory::BudgetResult one =
        memory::compute_budget(spec, qwen3_moe_run(1, false), kRtxPro6000Total, kRtxPro6000Sms,
                               no_overheads());
    REQUIRE(one.devices.size() == 1);
    CHECK(one.devices[0].weights == Bytes(kWeights + kExpertBytes));
    CHECK(one.devices[0].kv_available == r.devices[0].kv_available - Bytes(kExpertBytes));
  }
  SECTION("without EP every GPU holds all 128 experts, each split two ways: the same bytes") {
    const memory::BudgetResult tp_experts = memory::compute_budget(
        spec, qwen3_moe_run(2, false), kRtxPro6000Total, kRtxPro6000Sms, no_overheads());
    REQUIRE(tp_experts.devices.size() == 2);
    CHECK(tp_experts.devices[1].num_local_experts == 128);
    CHECK(tp_experts.devices[1].expert_weights == Bytes(kExpertBytes));
    CHECK(tp_experts.devices[1].weights == Bytes(kWeights));
  }
}

TEST_CASE("experts that do not divide evenly go one extra to each of the first EP ranks",
          "[memory][budget][expert_parallel]") {
  // vLLM's determine_expert_map: 128 experts over 3 ranks are 43, 43, 42, contiguous.
  CHECK(memory::local_num_experts(128, 3, 0) == 43);
  CHECK(memory::local_num_experts(128, 3, 1) == 43);
  CHECK(memory::local_num_experts(128, 3, 2) == 42);
  CHECK(memory::first_local_expert(128, 3, 1) == 43);
  CHECK(memory::first_local_expert(128, 3, 2) == 86);
  CHECK(memory::moe_split(2, 4, true).ep_size == 8);
  CHECK(memory::moe_split(2, 4, true).moe_tp == 1);
  CHECK(memory::moe_split(2, 4, false).ep_size == 1);
  CHECK(memory::moe_split(2, 4, false).moe_tp == 8);

  const model::ModelSpec spec = zoo("Qwen/Qwen3-30B-A3B");
  const memory::BudgetResult r = memory::compute_budget(
      spec, qwen3_moe_run(3, true), kRtxPro6000Total, kRtxPro6000Sms, no_overheads());
  REQUIRE(r.devices.size() == 3);
  // One expert of all 48 layers: 48 * 9,437,184 B.
  const Bytes one_expert(48 * 9'437'184);
  CHECK(r.devices[0].weights - r.devices[2].weights == one_expert);
  // The rank with fewer experts has more room, but the smallest count is the one reported.
  CHECK(r.devices[2].num_gpu_blocks >= r.devices[0].num_gpu_blocks);
  CHECK(r.num_gpu_blocks == r.devices[0].num_gpu_blocks);
}

TEST_CASE("data-parallel settings that make no sense are refused, each under its setting",
          "[memory][budget][expert_parallel]") {
  ValidationReport dense;
  memory::EngineConfig cfg = qwen3_moe_run(2, true);
  cfg.max_model_len = 8192;
  memory::validate(cfg, zoo("meta-llama/Llama-3.1-8B"), dense);
  REQUIRE(dense.problems().size() == 1);
  CHECK(dense.problems()[0].field == "engine.enable_expert_parallel");

  // Mixtral has 8 experts: an EP group of 16 GPUs would leave half of them without any.
  ValidationReport too_wide;
  memory::EngineConfig wide = qwen3_moe_run(16, true);
  wide.max_model_len = 8192;
  memory::validate(wide, zoo("mistralai/Mixtral-8x7B-v0.1"), too_wide);
  REQUIRE(too_wide.problems().size() == 1);
  CHECK(too_wide.problems()[0].field == "engine.data_parallel_size");

  // Without EP the experts split dp x tp ways: 768 / 5 is not whole.
  ValidationReport odd;
  memory::validate(qwen3_moe_run(5, false), zoo("Qwen/Qwen3-30B-A3B"), odd);
  REQUIRE(odd.problems().size() == 1);
  CHECK(odd.problems()[0].field == "engine.data_parallel_size");

  ValidationReport zero;
  memory::validate(qwen3_moe_run(0, false), zoo("Qwen/Qwen3-30B-A3B"), zero);
  REQUIRE(zero.problems().size() == 1);
  CHECK(zero.problems()[0].field == "engine.data_parallel_size");
}
