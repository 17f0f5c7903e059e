// The budget held to vLLM's own arithmetic (vllm/v1/worker/gpu_worker.py
// determine_available_memory; vllm/v1/core/kv_cache_utils.py get_num_blocks,
// get_max_concurrency_for_kv_cache_config, _get_kv_cache_groups_uniform_page_size) and to a
// recorded vLLM run.
#include "sim/memory/budget.hpp"

#include <algorithm>
#include <string>

#include "sim/memory/activation_profile.hpp"
#include "sim/model/model_zoo.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {

// NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on the SXM5 part.
constexpr int kH100Sms = 132;

model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, std::string(VRAMSIM_SOURCE_ROOT) + "/scenarios/models");
}

memory::EngineConfig vllm_defaults(std::int64_t max_model_len) {
  memory::EngineConfig c;
  c.max_model_len = max_model_len;
  c.max_num_seqs = 256;
  c.max_num_batched_tokens = 2048;
  c.weights = model::make_weight_format(DType::kBf16, "none");
  return c;
}

memory::RuntimeOverheads no_overheads() {
  memory::RuntimeOverheads o;
  o.source = "test";
  return o;
}

}  // namespace

TEST_CASE("Llama-3.1-8B budget follows vLLM's formula to the block", "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(32768);
  const Bytes total = GiB(80);
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, total, kH100Sms, no_overheads());
  REQUIRE(r.devices.size() == 1);
  const memory::DeviceBudget& d = r.devices[0];

  // Hand computation, every number written out:
  //   usable   = 0.9 * 85,899,345,920                                   = 77,309,411,328
  //   weights  = 8,030,261,248 params * 2 B + rotary cache 131,072 * 128 * 2 B
  //            = 16,060,522,496 + 33,554,432                           = 16,094,076,928
  //   forward  = 2048 tokens * (3 * 4096 + 3 * 14336 + 4096) * 2 B     =    243,269,632
  //   sampler phase (Triton top-k/top-p, R = 256 rows, V = 128,256, 132 SMs):
  //     hidden states (2048 + 256) * 4096 * 2 B                          =     18,874,368
  //     bf16 logits 256 * 128,256 * 2 B                                  =     65,667,072
  //     fp32 logits, probs, exponentials 3 * 256 * 128,256 * 4 B         =    394,002,432
  //     per-SM buffer 132 * 128,256 * 4 B                                =     67,719,168
  //     fixed 45 MiB (kSamplerFixedBytes)                                =     47,185,920
  //     together                                                         =    593,448,960
  //   KV avail = 77,309,411,328 - 16,094,076,928 - 593,448,960         = 60,621,885,440
  //   block    = 16 tokens * 32 layers * (2 * 8 * 128 * 2 B)           =      2,097,152
  //   blocks   = floor(60,621,885,440 / 2,097,152)                     =         28,906
  CHECK(d.usable.count() == 77'309'411'328);
  CHECK(d.weights.count() == 16'094'076'928);
  CHECK(memory::kSamplerFixedBytes == 47'185'920);
  CHECK(d.activation_peak.count() == 593'448'960);
  CHECK(d.kv_available.count() == 60'621'885'440);
  CHECK(d.kv_bytes_per_token == KiB(128));
  CHECK(r.num_gpu_blocks == 28'906);
  CHECK(r.kv_cache_tokens == 28'906 * 16);
  // Maximum concurrency = blocks / cdiv(32768, 16) = 28906 / 2048.
  CHECK(r.blocks_per_request == 2048);
  CHECK(r.max_concurrency == Approx(28906.0 / 2048.0));
  CHECK(r.fits);
}

TEST_CASE("Llama-3.1-8B weights: 8.03 B parameters, 14.96 GiB, 14.99 GiB as vLLM logs them",
          "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const memory::BudgetResult r =
      memory::compute_budget(spec, vllm_defaults(8192), GiB(80), kH100Sms, no_overheads());
  CHECK(r.num_params == 8'030'261'248);
  // vLLM: "Model loading took 14.9889 GiB" (vllm-project/vllm PR #17122, Llama-3.1-8B-Instruct,
  // L40S). The parameters alone are 14.96 GiB; the rotary cos/sin cache makes up the rest.
  CHECK(r.devices[0].weights.gib() == Approx(14.9889).margin(0.0005));
}

TEST_CASE("a recorded vLLM run on an RTX 4090: about 6% more KV blocks modelled than recorded, "
          "an open gap",
          "[memory][budget][validation]") {
  // shared/data/traces/vllm-bench/README.md: vLLM 0.19.0, Llama-3.1-8B, bf16, one RTX 4090
  // reporting 25,250,627,584 bytes, gpu_memory_utilization 0.9, block 16,
  // max_num_batched_tokens 2048, max_num_seqs 256, max_model_len 32768: 2,588 KV blocks.
  // NOTE: the sampler accounting of vLLM 0.19 (validated on the H100 start-up logs of
  // tests/validation/vllm_startup_logs.csv) leaves 0.32 GiB more for the KV cache here than the
  // recorded run had; the run's memory-profiling line was not published, so which term (the
  // non-torch memory of a consumer GPU, or the activation peak) is short is not known. This
  // pins the gap so that whoever finds that log closes it here; it was 0.6% with the older
  // sort-based sampler accounting, which is not what vLLM 0.19 runs.
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B");
  const memory::BudgetResult r = memory::compute_budget(
      spec, vllm_defaults(32768), Bytes(25'250'627'584), 128, memory::default_overheads(false));
  const double excess = static_cast<double>(r.num_gpu_blocks) / 2588.0 - 1.0;
  CHECK(excess > 0.05);
  CHECK(excess < 0.07);
}

TEST_CASE("tensor parallelism halves KV per token and adds communicator memory",
          "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(32768);
  const memory::RuntimeOverheads o = memory::default_overheads(true);
  const memory::BudgetResult one = memory::compute_budget(spec, cfg, GiB(80), kH100Sms, o);
  cfg.tp = 2;
  const memory::BudgetResult two = memory::compute_budget(spec, cfg, GiB(80), kH100Sms, o);
  REQUIRE(two.devices.size() == 2);
  CHECK(two.devices[0].kv_bytes_per_token == KiB(64));
  CHECK(two.devices[0].non_torch == o.non_torch_base + o.non_torch_comm);
  CHECK(one.devices[0].non_torch == o.non_torch_base);
  CHECK(two.devices[0].weights < one.devices[0].weights);
  CHECK(two.num_gpu_blocks > one.num_gpu_blocks);
}

TEST_CASE("a model too big for one GPU does not fit and says by how much", "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-70B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(80), kH100Sms, memory::default_overheads(true));
  CHECK_FALSE(r.fits);
  CHECK(r.shortfall > GiB(60));
  CHECK(r.reason.find("no memory left for the KV cache") != std::string::npos);
  cfg.tp = 4;
  CHECK(memory::compute_budget(spec, cfg, GiB(80), kH100Sms, memory::default_overheads(true))
            .fits);
}

TEST_CASE("when one max-length request does not fit, the longest that fits is found",
          "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(131072);
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(24), kH100Sms, memory::default_overheads(false));
  // ~5 GiB of KV at 128 KiB/token holds about 40k tokens, not 131,072.
  CHECK_FALSE(r.fits);
  CHECK(r.reason.find("max_model_len 131072") != std::string::npos);
  CHECK(r.max_model_len_that_fits > 16);
  CHECK(r.max_model_len_that_fits < 131072);
  CHECK(r.max_model_len_that_fits / 16 <= r.num_gpu_blocks);
  CHECK((r.max_model_len_that_fits + 16) / 16 > r.num_gpu_blocks);
}

TEST_CASE("Gemma-2 splits its KV cache into a full and a sliding-window group",
          "[memory][budget][kv]") {
  const model::ModelSpec spec = zoo("google/gemma-2-9b-it");
  memory::EngineConfig cfg = vllm_defaults(8192);
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(80), kH100Sms, no_overheads());
  const memory::DeviceBudget& d = r.devices[0];
  // 42 layers: 21 sliding (window 4096) + 21 global -> 2 groups of 21 layers.
  CHECK(d.layers_per_group == 21);
  CHECK(d.num_groups == 2);
  // Blocks per request: full cdiv(8192, 16) = 512; sliding cdiv(min(4095 + 2048, 8192), 16) + 1
  // = 385 (vLLM SlidingWindowSpec.max_memory_usage_bytes).
  CHECK(r.blocks_per_request == 512 + 385);
  CHECK(r.kv_cache_tokens == r.num_gpu_blocks / 2 * 16);
}

TEST_CASE("gpt-oss-20b groups 12 sliding and 12 full layers", "[memory][budget][kv]") {
  const model::ModelSpec spec = zoo("openai/gpt-oss-20b");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.weights = model::make_weight_format(DType::kBf16, "mxfp4");
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(80), kH100Sms, no_overheads());
  CHECK(r.devices[0].layers_per_group == 12);
  CHECK(r.devices[0].num_groups == 2);
  // Window 128: cdiv(min(127 + 2048, 8192), 16) + 1 = 137 blocks, plus 512 for full layers.
  CHECK(r.blocks_per_request == 512 + 137);
}

TEST_CASE("pipeline stages each hold their own layers, and the last runs the sampler",
          "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.pp = 2;
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(80), kH100Sms, no_overheads());
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].num_layers == 16);
  CHECK(r.devices[1].num_layers == 16);
  CHECK(r.devices[1].activation_peak > r.devices[0].activation_peak);
  CHECK(r.devices[0].kv_bytes_per_token == KiB(64));
}

TEST_CASE("an explicit block count overrides the computed one", "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.num_gpu_blocks_override = 1000;
  const memory::BudgetResult r =
      memory::compute_budget(spec, cfg, GiB(80), kH100Sms, no_overheads());
  CHECK(r.num_gpu_blocks == 1000);
  CHECK(r.devices[0].kv_cache == Bytes(1000 * 2'097'152));
  CHECK(r.max_concurrency == Approx(1000.0 / 512.0));
}

TEST_CASE("kv_cache_memory sizes the cache as given and checks that the device holds it",
          "[memory][budget]") {
  // vllm/v1/worker/gpu_worker.py determine_available_memory returns kv_cache_memory_bytes as
  // the available memory without profiling; get_num_blocks divides it by the block's bytes
  // (2 MiB for Llama-3.1-8B in bf16: 16 tokens x 32 layers x 8 KV heads x 128 x 2 x 2 B).
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.gpu_memory_utilization = 0.3;  // ignored when the cache is given
  cfg.kv_cache_memory = GiB(20) + MiB(1);
  memory::BudgetResult r = memory::compute_budget(spec, cfg, GiB(80), kH100Sms, no_overheads());
  CHECK(r.num_gpu_blocks == 10240);
  CHECK(r.devices[0].kv_cache == GiB(20));
  CHECK(r.devices[0].headroom_shortfall == Bytes(0));
  CHECK(r.fits);
  // On 24 GiB the 16,094,076,928 B of weights leave less than 20 GiB: not a fit, by exactly
  // what the device would have to hold beyond its total.
  r = memory::compute_budget(spec, cfg, GiB(24), kH100Sms, no_overheads());
  const memory::DeviceBudget& d = r.devices[0];
  const Bytes held = d.weights + d.activation_peak + d.non_torch + d.cuda_context + d.cuda_graph +
                     d.kv_cache;
  CHECK(!r.fits);
  CHECK(r.shortfall == held - GiB(24));
  CHECK(r.reason.find("kv_cache_memory_bytes") != std::string::npos);
  ValidationReport report;
  cfg.kv_cache_memory = Bytes(0);
  memory::validate(cfg, spec, report);
  CHECK(report.format().find("engine.kv_cache_memory_bytes: must be positive") !=
        std::string::npos);
}

TEST_CASE("invalid engine settings are reported under their config paths", "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.block_size = 15;
  cfg.tp = 3;
  cfg.gpu_memory_utilization = 1.5;
  cfg.max_model_len = 200000;
  ValidationReport report;
  memory::validate(cfg, spec, report);
  std::string fields;
  for (const Problem& p : report.problems()) fields += p.field + ";";
  CHECK(fields.find("engine.block_size") != std::string::npos);
  CHECK(fields.find("engine.tp") != std::string::npos);
  CHECK(fields.find("engine.gpu_memory_utilization") != std::string::npos);
  CHECK(fields.find("engine.max_model_len") != std::string::npos);
}

TEST_CASE("pipeline-only ranks carry no all-reduce communicator, later stages hold received "
          "hidden states, the tightest rank decides",
          "[memory][budget]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  memory::EngineConfig cfg = vllm_defaults(8192);
  cfg.pp = 2;
  const memory::RuntimeOverheads o = memory::default_overheads(true);
  const memory::BudgetResult r = memory::compute_budget(spec, cfg, GiB(80), kH100Sms, o);
  REQUIRE(r.devices.size() == 2);
  const memory::DeviceBudget& first = r.devices[0];
  const memory::DeviceBudget& last = r.devices[1];
  CHECK(first.non_torch == o.non_torch_pp_only);
  CHECK(last.non_torch == o.non_torch_pp_only);
  const memory::ProfileBatch b{2048, 256, 1, DType::kBf16, kH100Sms,
                               memory::SamplerKind::kTritonTopKTopP};
  CHECK(first.activation_peak == memory::forward_peak_bytes(spec, b));
  CHECK(last.activation_peak ==
        memory::activation_peak_bytes(spec, b, true) + Bytes(2LL * 2048 * 4096 * 2));
  CHECK(r.num_gpu_blocks == std::min(first.num_gpu_blocks, last.num_gpu_blocks));
  // With TP the communicator comes back on every rank.
  cfg.tp = 2;
  const memory::BudgetResult both = memory::compute_budget(spec, cfg, GiB(80), kH100Sms, o);
  CHECK(both.devices[0].non_torch == o.non_torch_base + o.non_torch_comm);
}
