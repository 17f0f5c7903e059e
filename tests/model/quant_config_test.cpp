// Weight bytes of quantized checkpoints, from config.json's quantization_config, against bytes
// worked out by hand from each format's stored tensors.
//
// The test model (tests/model/data/quant_*.json, synthetic): a Llama decoder with hidden 512,
// intermediate 1024, 8 query heads and 2 KV heads of 64, 2 layers, vocab 1024, untied. Per
// layer its linear layers (in x out) are q 512x512, k 512x128, v 512x128, o 512x512, gate and
// up 512x1024, down 1024x512 (2,228,224 weights). Kept in bf16 in every format: embed_tokens
// and lm_head 1024 x 512 (1,048,576 B each) and 5 norms of 512 (5,120 B): 2,102,272 B.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_format.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;

namespace {

constexpr std::int64_t kKeptBf16 = 2 * 1024 * 512 * 2 + 5 * 512 * 2;
static_assert(kKeptBf16 == 2'102'272);

std::filesystem::path data(const std::string& name) {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "model" / "data" / (name + ".json");
}

ModelSpec load(const std::string& name) { return load_hf_config(data(name)); }

std::int64_t bytes_of(const ModelSpec& m, Parallelism par = {}, DType dtype = DType::kBf16,
                      const std::string& flag = "") {
  return weight_bytes_per_device(m, make_weight_format(dtype, flag, m), par).count();
}

// The error report of parsing `config` with its quantization_config replaced by `q`.
std::string quant_error(const nlohmann::json& q, const std::string& key = "quantization_config") {
  std::ifstream in(data("quant_gptq_int8"));
  nlohmann::json config = nlohmann::json::parse(in);
  config.erase("quantization_config");
  config[key] = q;
  try {
    parse_hf_config(config, "bad/config.json");
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

// Llama-3.1-8B (../shared/data/models) with `q` as its quantization_config.
ModelSpec llama8b_with(const nlohmann::json& q) {
  std::ifstream in(testing::shared_models_dir() / "meta-llama__Llama-3.1-8B.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["quantization_config"] = q;
  return parse_hf_config(config, "Llama-3.1-8B/config.json");
}

}  // namespace

// GPTQ storage per linear layer (vLLM gptq.py GPTQLinearMethod.create_weights; AutoGPTQ
// QuantLinear): qweight int32 [in * bits / 32, out], qzeros int32 [in / G, out * bits / 32],
// scales fp16 [in / G, out], g_idx int32 [in].
TEST_CASE("GPTQ 8-bit, group 128: bits and group_size from quantization_config",
          "[model][weights][quant][gptq]") {
  const ModelSpec m = load("quant_gptq_int8");
  REQUIRE(m.checkpoint_quant);
  CHECK(m.checkpoint_quant->layout.weight_bits == 8);
  // q (512x512): qweight 512*512 = 262,144; 4 groups: scales 4*512*2 = 4,096, qzeros
  //   4*512*8/8 = 2,048; g_idx 512*4 = 2,048                              -> 270,336
  // k, v (512x128): 65,536 + 1,024 + 512 + 2,048                           ->  69,120 each
  // o (512x512)                                                           -> 270,336
  // gate, up (512x1024): 524,288 + 8,192 + 4,096 + 2,048                   -> 538,624 each
  // down (1024x512): 8 groups: 524,288 + 8,192 + 4,096 + 4,096              -> 540,672
  constexpr std::int64_t layer = 270'336 + 2 * 69'120 + 270'336 + 2 * 538'624 + 540'672;
  static_assert(layer == 2'296'832);
  CHECK(bytes_of(m) == kKeptBf16 + 2 * layer);
  CHECK(bytes_of(m) == 6'695'936);
  // The 4-bit default would have been 2,102,272 + 2 * 1,174,016 = 4,450,304 B.
  CHECK(bytes_of(m, {}, DType::kBf16, "gptq_marlin") == 6'695'936);
}

TEST_CASE("GPTQ on Llama-3.1-8B: 8-bit is 3.5 GB more than 4-bit, not sized as 4-bit",
          "[model][weights][quant][gptq]") {
  // Per layer (in x out): q 4096x4096, k/v 4096x1024, o 4096x4096, gate/up 4096x14336,
  // down 14336x4096 = 218,103,808 weights; G = 128 gives 1,703,936 scales; g_idx rows
  // 4096 * 6 + 14336 = 38,912 -> 155,648 B.
  //   4-bit: 109,051,904 + 3,407,872 (scales) + 851,968 (qzeros) + 155,648 = 113,467,392
  //   8-bit: 218,103,808 + 3,407,872 + 1,703,936 + 155,648 = 223,371,264
  // embed_tokens and lm_head 128256 x 4096 and 65 norms of 4096 in fp16: 2,101,878,784 B.
  const nlohmann::json int4 = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128},
                               {"desc_act", false}, {"sym", true}};
  nlohmann::json int8 = int4;
  int8["bits"] = 8;
  const std::int64_t b4 = bytes_of(llama8b_with(int4), {}, DType::kFp16);
  const std::int64_t b8 = bytes_of(llama8b_with(int8), {}, DType::kFp16);
  CHECK(b4 == 2'101'878'784LL + 32LL * 113'467'392);
  CHECK(b8 == 2'101'878'784LL + 32LL * 223'371'264);
  CHECK(b8 - b4 == 3'516'923'904);
}

TEST_CASE("GPTQ desc_act keeps every group's scales on a row-parallel shard",
          "[model][weights][quant][gptq][tp]") {
  const ModelSpec m = load("quant_gptq_int4_desc_act");
  CHECK(m.checkpoint_quant->layout.act_order);
  // tp = 2, one KV head per rank; vocab 1024 -> 512 rows per rank; norms replicated.
  // Column shards: q 512x256: 65,536 + 4*256*2 + 4*256/2 + 512*4 = 70,144; k, v 512x64:
  //   16,384 + 512 + 128 + 2,048 = 19,072; gate, up 512x512: 131,072 + 4,096 + 1,024 + 2,048
  //   = 138,240.
  // Row shards keep all groups of the full input (vLLM gptq.py: act-order leaves
  //   scale_and_zero_input_dim unset): o 256x512 with 512/128 = 4 groups: 65,536 + 4,096 +
  //   1,024 + 256*4 = 71,680 (69,120 with 2 groups); down 512x512 with 1024/128 = 8 groups:
  //   131,072 + 8,192 + 2,048 + 2,048 = 143,360 (138,240 with 4).
  constexpr std::int64_t layer = 70'144 + 2 * 19'072 + 71'680 + 2 * 138'240 + 143'360;
  constexpr std::int64_t kept = 2 * 512 * 512 * 2 + 5 * 512 * 2;
  CHECK(bytes_of(m, Parallelism{2, 1}) == kept + 2 * layer);
  CHECK(bytes_of(m, Parallelism{2, 1}) == 2'253'312);
}

// AWQ (vLLM awq.py AWQLinearMethod.create_weights; AutoAWQ WQLinear_GEMM): qweight int32
// [in, out * 4 / 32], qzeros int32 [in / G, out * 4 / 32], scales fp16 [in / G, out].
TEST_CASE("AWQ reads AutoAWQ's old keys w_bit and q_group_size", "[model][weights][quant][awq]") {
  const ModelSpec m = load("quant_awq_g64");
  // q 512x512, 8 groups of 64: 131,072 + 8*512*2 + 8*512/2 = 131,072 + 8,192 + 2,048 = 141,312
  // k, v 512x128: 32,768 + 2,048 + 512 = 35,328; o as q: 141,312
  // gate, up 512x1024: 262,144 + 16,384 + 4,096 = 282,624; down 1024x512 (16 groups):
  //   262,144 + 16,384 + 4,096 = 282,624
  constexpr std::int64_t layer = 2 * 141'312 + 2 * 35'328 + 3 * 282'624;
  CHECK(bytes_of(m, {}, DType::kFp16) == kKeptBf16 + 2 * layer);
  CHECK(bytes_of(m, {}, DType::kFp16) == 4'504'576);
  CHECK(nominal_bits_per_weight(make_weight_format(DType::kFp16, "", m)) ==
        Approx(4.0 + 20.0 / 64));
}

// FP8 (vLLM fp8.py Fp8LinearMethod.create_weights, serialized checkpoint): weight fp8
// [out, in], one fp32 weight_scale per module, an fp32 input_scale per module when
// activation_scheme is static; block-wise weight_scale_inv fp32 [ceil(out/128), ceil(in/128)].
TEST_CASE("FP8 per-tensor with static activations: a weight and an input scale per module",
          "[model][weights][quant][fp8]") {
  const ModelSpec m = load("quant_fp8_per_tensor");
  // 2,228,224 one-byte weights and 7 * (4 + 4) scale bytes per layer.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (2'228'224 + 7 * 8));
  CHECK(bytes_of(m) == 6'558'832);
}

TEST_CASE("FP8 block-wise weight_block_size 128 x 128 (DeepSeek-V3, Qwen3-FP8 style)",
          "[model][weights][quant][fp8]") {
  const ModelSpec m = load("quant_fp8_block");
  const QuantLayout& l = m.checkpoint_quant->layout;
  CHECK((l.granularity == ScaleGranularity::kBlock && l.block_out == 128 && l.block_in == 128));
  // Scales per module ceil(out/128) * ceil(in/128) * 4 B: q, o 4*4*4 = 64; k, v 1*4*4 = 16;
  // gate, up 8*4*4 = 128; down 4*8*4 = 128: 64*2 + 16*2 + 128*3 = 544 B per layer.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (2'228'224 + 544));
  CHECK(bytes_of(m) == 6'559'808);
}

TEST_CASE("FP8 on Llama-3.1-8B matches the published 9.08 GB checkpoint",
          "[model][weights][quant][fp8][validation]") {
  // Published: huggingface.co/Model-SafeTensors/Meta-Llama-3-8B-Instruct-FP8 (per-tensor,
  // static, the Llama-3-8B shapes of Llama-3.1-8B) shards 5 GB + 4.08 GB = 9.08 GB, and
  // FriendliAI/Meta-Llama-3.1-8B-Instruct-fp8 model.safetensors 9.08 GB (Hub file listings, GB =
  // 10^9 B, 3 digits). Computed: 32 * (218,103,808 + 7 * 8) + 2 * (1,050,673,152 + 266,240).
  const ModelSpec m =
      llama8b_with({{"quant_method", "fp8"}, {"activation_scheme", "static"}});
  const std::int64_t b = bytes_of(m);
  CHECK(b == 32 * (218'103'808LL + 56) + 2 * (1'050'673'152LL + 266'240));
  CHECK(b == 9'081'202'432);
  CHECK(static_cast<double>(b) / 1e9 == Approx(9.08).margin(0.005));
}

TEST_CASE("a --quantization that contradicts the checkpoint is refused naming the config key",
          "[model][weights][quant][errors]") {
  const ModelSpec m = load("quant_gptq_int8");
  CHECK_THROWS_WITH(make_weight_format(DType::kFp16, "awq", m),
                    Catch::Contains("quantization_config.quant_method") &&
                        Catch::Contains("gptq") && Catch::Contains("awq"));
  CHECK_THROWS_WITH(make_weight_format(DType::kFp16, "q9", m),
                    Catch::Contains("unknown quantization method 'q9'"));
}

TEST_CASE("a malformed quantization_config is refused naming the file and the key",
          "[model][quant][errors]") {
  const std::string bits = quant_error({{"quant_method", "gptq"}, {"bits", 5}, {"group_size", 128}});
  CHECK_THAT(bits, Catch::Contains("bad/config.json") &&
                       Catch::Contains("quantization_config.bits") && Catch::Contains("5"));
  CHECK_THAT(quant_error({{"quant_method", "gptq"}, {"group_size", 128}}),
             Catch::Contains("quantization_config.bits") && Catch::Contains("missing"));
  CHECK_THAT(quant_error({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 0}}),
             Catch::Contains("quantization_config.group_size"));
  CHECK_THAT(quant_error({{"quant_method", "awq"}, {"bits", 3}, {"group_size", 128}}),
             Catch::Contains("quantization_config.bits"));
  CHECK_THAT(quant_error({{"quant_method", "fp8"}, {"activation_scheme", "dynamic"},
                          {"weight_block_size", nlohmann::json::array({128})}}),
             Catch::Contains("quantization_config.weight_block_size"));
  CHECK_THAT(quant_error({{"quant_method", "fp8"}}),
             Catch::Contains("quantization_config.activation_scheme"));
  CHECK_THAT(quant_error({{"quant_method", "gguf"}}),
             Catch::Contains("quantization_config.quant_method") && Catch::Contains("gguf"));
  CHECK_THAT(quant_error("4bit"), Catch::Contains("quantization_config") &&
                                      Catch::Contains("expected a JSON object"));
  CHECK_THAT(quant_error({{"bits", 4}}), Catch::Contains("quantization_config.quant_method"));
  // None of them blames a flag the user never typed.
  CHECK_THAT(bits, !Catch::Contains("--quantization") && !Catch::Contains("engine."));
}
