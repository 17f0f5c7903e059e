// Issue 16 in the budget: speculative decoding's drafter (its weights and its KV layers beside
// the target's) and --cpu-offload-gb (weights in host memory, their bytes handed to the KV
// cache), each against a hand count on Llama-3.1-8B in bf16 on one H100.
//
// Llama-3.1-8B, bf16: one decoder layer holds q 4096x4096, k and v 4096x1024, o 4096x4096, gate,
// up and down 4096x14336 and two 4096 norms: 218,112,000 parameters, 436,224,000 B. KV per
// token and layer: 2 x 8 heads x 128 x 2 B = 4,096 B (32 layers: 131,072 B).
#include <fmt/format.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/memory/budget.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/budget_run.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace vramsim {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);
constexpr std::int64_t kLayerBytes = 436'224'000;
constexpr std::int64_t kNormBytes = 4096 * 2;

run::BudgetRequest llama8b() {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.suggest = false;
  return req;
}

std::string error_fields(const run::BudgetRequest& req) {
  try {
    run::answer_budget(req, kRoot);
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) out += (out.empty() ? "" : " ") + p.field;
    return out;
  }
  return "";
}

TEST_CASE("cpu offload moves parameters to host memory one at a time until the budget",
          "[memory][offload]") {
  const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B-Instruct", kRoot / "scenarios" / "models");
  const model::WeightFormat bf16 = model::make_weight_format(DType::kBf16, "none");
  const auto off = [&](Bytes budget) {
    return memory::offloaded_weight_bytes(spec, bf16, model::Parallelism{1, 1}, 0, budget);
  };
  CHECK(off(Bytes(0)) == Bytes(0));
  // 1 GiB = 1,073,741,824 B: layers 0 and 1 (872,448,000 B), then layer 2's input norm, fused
  // qkv_proj (50,331,648 B), o_proj (33,554,432 B), post-attention norm: 956,350,464 B, still
  // under; its fused gate_up_proj (234,881,024 B) crosses it and is the last one moved.
  CHECK(off(GiB(1)) ==
        Bytes(2 * kLayerBytes + kNormBytes + 50'331'648 + 33'554'432 + kNormBytes + 234'881'024));
  // Never more than the decoder layers: embeddings, final norm and lm_head stay.
  CHECK(off(GiB(100)) == Bytes(32 * kLayerBytes));
}

TEST_CASE("offloaded weights free their bytes for the KV cache, and host memory is reported",
          "[memory][offload]") {
  const run::BudgetAnswer base = run::answer_budget(llama8b(), kRoot);
  run::BudgetRequest req = llama8b();
  req.cpu_offload_gb = 1.0;
  const run::BudgetAnswer a = run::answer_budget(req, kRoot);
  const memory::DeviceBudget& d0 = base.result.devices.front();
  const memory::DeviceBudget& d = a.result.devices.front();
  CHECK(d0.weights_offloaded == Bytes(0));
  CHECK(d.weights == d0.weights);  // still the model's weights, now split device / host
  CHECK(d.weights_offloaded == Bytes(1'191'231'488));
  CHECK(d.kv_available - d0.kv_available == d.weights_offloaded);
  const Bytes block = d.page_bytes * d.layers_per_group;  // 16 tokens x 131,072 B
  CHECK(block == Bytes(16 * 131'072));
  CHECK(a.result.num_gpu_blocks == d.kv_available / block);
  CHECK(a.result.num_gpu_blocks > base.result.num_gpu_blocks);

  req.cpu_offload_gb = -1.0;
  CHECK(error_fields(req) == "engine.cpu_offload_gb");
}

TEST_CASE("an EAGLE-3 head: one decoder layer, fc over three layers, its own lm_head and KV",
          "[memory][speculative]") {
  const run::BudgetAnswer base = run::answer_budget(llama8b(), kRoot);
  run::BudgetRequest req = llama8b();
  req.speculative_config =
      R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
          "num_speculative_tokens": 3})";
  req.spec_acceptance_rate = "0.7";
  const run::BudgetAnswer a = run::answer_budget(req, kRoot);
  REQUIRE(a.speculative);
  CHECK(a.speculative->config.expected_tokens_per_step() == Approx(1 + 0.7 + 0.49 + 0.343));
  const memory::DeviceBudget& d = a.result.devices.front();
  // Not a local config.json: the target's shapes and vocabulary (a note says so). The layer,
  // the final norm, lm_head 128,256 x 4096, fc 3 x 4096 -> 4096, and qkv_proj's second 4096
  // inputs for its 4096 + 2 x 1024 outputs; embed_tokens shared.
  const std::int64_t lm_head = 128'256LL * 4096 * 2;
  const std::int64_t fc = 3LL * 4096 * 4096 * 2;
  const std::int64_t qkv_extra = 4096LL * (4096 + 2 * 1024) * 2;
  CHECK(d.draft_weights == Bytes(kLayerBytes + kNormBytes + lm_head + fc + qkv_extra));
  CHECK(d.draft_kv_bytes_per_token == Bytes(4096));
  CHECK(d.kv_bytes_per_token == Bytes(131'072 + 4096));
  CHECK(d.kv_available == base.result.devices.front().kv_available - d.draft_weights);
  CHECK(a.result.num_gpu_blocks == d.kv_available / Bytes(16 * (131'072 + 4096)));
  CHECK(!a.notes.empty());
}

TEST_CASE("an EAGLE head shares lm_head, ngram adds nothing, a head's own config is read",
          "[memory][speculative]") {
  run::BudgetRequest req = llama8b();
  req.spec_acceptance_rate = "0.6";
  req.speculative_config =
      R"({"model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 2})";
  const run::BudgetAnswer eagle = run::answer_budget(req, kRoot);
  CHECK(eagle.result.devices.front().draft_weights ==
        Bytes(kLayerBytes + kNormBytes + 2LL * 4096 * 4096 * 2));

  req.speculative_config = R"({"method": "ngram", "num_speculative_tokens": 4})";
  const run::BudgetAnswer ngram = run::answer_budget(req, kRoot);
  const run::BudgetAnswer base = run::answer_budget(llama8b(), kRoot);
  CHECK(ngram.result.devices.front().draft_weights == Bytes(0));
  CHECK(ngram.result.num_gpu_blocks == base.result.num_gpu_blocks);

  // A head's config.json: 32,000 draft tokens and a narrower MLP.
  io::testing::ScratchDir dir("eagle3-head");
  std::ofstream(dir / "config.json")
      << R"({"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 4096,
             "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": 1, "draft_vocab_size": 32000, "vocab_size": 128256})";
  req.speculative_config = fmt::format(
      R"({{"method": "eagle3", "model": "{}", "num_speculative_tokens": 3}})", dir.path().string());
  const run::BudgetAnswer own = run::answer_budget(req, kRoot);
  const std::int64_t layer = kLayerBytes - 3LL * 4096 * (14336 - 8192) * 2;
  CHECK(own.result.devices.front().draft_weights ==
        Bytes(layer + kNormBytes + 32'000LL * 4096 * 2 + 3LL * 4096 * 4096 * 2 +
              4096LL * (4096 + 2 * 1024) * 2));
}

TEST_CASE("a draft model: all its weights, and its smaller KV pages in one block with the "
          "target's",
          "[memory][speculative]") {
  run::BudgetRequest req = llama8b();
  req.speculative_config =
      R"({"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4})";
  req.spec_acceptance_rate = "0.8,0.6,0.4,0.2";
  const run::BudgetAnswer a = run::answer_budget(req, kRoot);
  REQUIRE(a.speculative);
  CHECK(a.speculative->config.method == serving::SpeculativeMethod::kDraftModel);
  const memory::DeviceBudget& d = a.result.devices.front();
  // Llama-3.2-1B: 1,235,814,400 parameters (tied embeddings) in bf16, plus nothing else.
  CHECK(d.draft_weights == Bytes(1'235'814'400LL * 2));
  // 16 layers x 2 x 8 heads x 64 x 2 B = 32,768 B per token beside the target's 131,072 B.
  CHECK(d.draft_kv_bytes_per_token == Bytes(32'768));
  CHECK(d.kv_bytes_per_token == Bytes(163'840));
  CHECK(a.result.num_gpu_blocks == d.kv_available / Bytes(16 * 163'840));

  req.spec_acceptance_rate = "0.5";
  req.speculative_config = R"({"model": "openai-community/gpt2", "num_speculative_tokens": 2})";
  CHECK(error_fields(req) == "engine.speculative_config.model");  // another vocabulary
  req.speculative_config = R"({"model": "no/such-model", "num_speculative_tokens": 2})";
  CHECK(error_fields(req) == "engine.speculative_config.model");
}

TEST_CASE("mtp reads the checkpoint's num_nextn_predict_layers, and bad combinations are refused",
          "[memory][speculative]") {
  run::BudgetRequest req = llama8b();
  req.spec_acceptance_rate = "0.8";
  req.speculative_config = R"({"method": "mtp", "num_speculative_tokens": 1})";
  CHECK(error_fields(req) == "engine.speculative_config.method");  // no MTP layers

  // The 8B config with one MTP layer added (as DeepSeek-V3 / MiMo configs carry them).
  io::testing::ScratchDir dir("mtp-target");
  {
    std::ifstream in(kRoot / "scenarios" / "models" / "meta-llama__Llama-3.1-8B-Instruct.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t brace = text.find('{');
    text.insert(brace + 1, "\"num_nextn_predict_layers\": 1, ");
    std::ofstream(dir / "config.json") << text;
  }
  req.model_id = (dir / "config.json").string();
  const run::BudgetAnswer a = run::answer_budget(req, kRoot);
  // One layer, eh_proj 2 x 4096 -> 4096, enorm and hnorm; embed_tokens and lm_head shared.
  CHECK(a.result.devices.front().draft_weights ==
        Bytes(kLayerBytes + 2LL * 4096 * 4096 * 2 + 2 * kNormBytes));
  CHECK(a.result.devices.front().draft_kv_bytes_per_token == Bytes(4096));

  req.speculative_config =
      R"({"method": "mtp", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 1})";
  CHECK(error_fields(req) == "engine.speculative_config.model");  // would be ignored

  req = llama8b();
  req.speculative_config = R"({"method": "ngram", "num_speculative_tokens": 3})";
  CHECK(error_fields(req) == "engine.spec_acceptance_rate");  // the rate is required
  req.spec_acceptance_rate = "0.5,0.5";
  CHECK(error_fields(req) == "engine.spec_acceptance_rate");  // 2 rates for k = 3
  req.spec_acceptance_rate = "0.5";
  req.pp = 2;
  CHECK(error_fields(req) == "engine.speculative_config");
  req.pp = 1;
  req.tp = 2;
  req.speculative_config =
      R"({"method": "ngram", "num_speculative_tokens": 3, "draft_tensor_parallel_size": 1})";
  CHECK(error_fields(req) == "engine.speculative_config.draft_tensor_parallel_size");
  req = llama8b();
  req.spec_acceptance_rate = "0.5";  // without a speculative config: ignored, so refused
  CHECK(error_fields(req) == "engine.spec_acceptance_rate");
}

}  // namespace
}  // namespace vramsim
