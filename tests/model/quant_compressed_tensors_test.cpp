// compressed-tensors checkpoints (llm-compressor, RedHatAI / neuralmagic): weight bytes from
// config_groups, ignore and format, against bytes worked out by hand.
//
// Stored tensors per linear layer, as vLLM's compressed_tensors schemes allocate them
// (vllm/model_executor/layers/quantization/compressed_tensors/schemes/):
//   pack-quantized (CompressedTensorsWNA16): weight_packed int32 [out, in * b / 32],
//     weight_scale [out, in / G] in the model dtype, weight_shape int64 [2], weight_zero_point
//     int32 [out * b / 32, in / G] only when not symmetric, weight_g_idx int32 [in] with
//     actorder group.
//   float-quantized (CompressedTensorsW8A8Fp8): weight fp8 [out, in], weight_scale fp32 [1]
//     (tensor) or [out, 1] (channel) or [ceil(out/n), ceil(in/k)] (block).
//   int-quantized (CompressedTensorsW8A8Int8): weight int8 [out, in], weight_scale fp32 [1] or
//     [out, 1]; input_scale fp32 [1] when activations are static.
// The test model is tests/model/data's tiny Llama (see quant_config_test.cpp): linear layers
// q 512x512, k/v 512x128, o 512x512, gate/up 512x1024, down 1024x512 per layer, 2 layers;
// embed_tokens, lm_head and norms in bf16: 2,102,272 B.
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

using namespace vramsim;
using namespace vramsim::model;

namespace {

constexpr std::int64_t kKeptBf16 = 2'102'272;

std::filesystem::path data(const std::string& name) {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "model" / "data" / (name + ".json");
}

ModelSpec load(const std::string& name) { return load_hf_config(data(name)); }

std::int64_t bytes_of(const ModelSpec& m, DType dtype = DType::kBf16) {
  return weight_bytes_per_device(m, make_weight_format(dtype, "", m)).count();
}

// The report of parsing the W4A16 test config with `edit` applied to its quantization_config.
template <typename Edit>
std::string error_after(Edit edit) {
  std::ifstream in(data("quant_ct_w4a16"));
  nlohmann::json config = nlohmann::json::parse(in);
  edit(config["quantization_config"]);
  try {
    parse_hf_config(config, "ct/config.json");
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

}  // namespace

TEST_CASE("compressed-tensors W4A16 pack-quantized, group 128, symmetric: no zero points",
          "[model][weights][quant][compressed-tensors]") {
  const ModelSpec m = load("quant_ct_w4a16");
  REQUIRE(m.checkpoint_quant);
  CHECK(m.checkpoint_quantization == "compressed-tensors");
  CHECK(m.checkpoint_quant->method == QuantMethod::kGptq);  // vLLM runs it on GPTQ Marlin
  // q 512x512: 131,072 packed + 4*512 bf16 scales 4,096 + weight_shape 16 = 135,184
  // k, v 512x128: 32,768 + 1,024 + 16 = 33,808; o as q: 135,184
  // gate, up 512x1024: 262,144 + 8,192 + 16 = 270,352; down 1024x512: 262,144 + 8*512*2 + 16
  //   = 270,352
  constexpr std::int64_t layer = 2 * 135'184 + 2 * 33'808 + 3 * 270'352;
  CHECK(bytes_of(m) == kKeptBf16 + 2 * layer);
  CHECK(bytes_of(m) == 4'400'352);
}

TEST_CASE("compressed-tensors asymmetric W4A16 adds packed zero points, actorder group a g_idx",
          "[model][weights][quant][compressed-tensors]") {
  std::ifstream in(data("quant_ct_w4a16"));
  nlohmann::json config = nlohmann::json::parse(in);
  nlohmann::json& w = config["quantization_config"]["config_groups"]["group_0"]["weights"];
  w["symmetric"] = false;
  w["actorder"] = "group";
  const ModelSpec m = parse_hf_config(config, "asym.json");
  // Per module: + zero points groups * out * 4 bits + g_idx in * 4 B.
  // q: 135,184 + 4*512/2 + 2,048 = 138,256; k, v: 33,808 + 256 + 2,048 = 36,112;
  // o: 138,256; gate, up: 270,352 + 2,048 + 2,048 = 274,448; down: 270,352 + 2,048 + 4,096
  //   = 276,496
  constexpr std::int64_t layer = 2 * 138'256 + 2 * 36'112 + 2 * 274'448 + 276'496;
  CHECK(bytes_of(m) == kKeptBf16 + 2 * layer);
}

TEST_CASE("compressed-tensors FP8 dynamic per-channel honours ignore by module path",
          "[model][weights][quant][compressed-tensors]") {
  const ModelSpec m = load("quant_ct_fp8_dynamic");
  CHECK(m.checkpoint_quant->method == QuantMethod::kFp8);
  CHECK(m.checkpoint_quant->kv_cache_bits == 8);
  // Every module: in*out fp8 + out fp32 scales: 2,228,224 + 4 * (512 + 128 + 128 + 512 + 1024
  //   + 1024 + 512) = 2,228,224 + 15,360 = 2,243,584 per layer.
  // ignore "model.layers.1.mlp.down_proj": that one stays bf16, 1024*512*2 = 1,048,576 instead
  //   of 524,288 + 2,048 = 526,336.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * 2'243'584 - 526'336 + 1'048'576);
  CHECK(bytes_of(m) == 7'111'680);
}

TEST_CASE("compressed-tensors ignore takes re: patterns as llm-compressor writes them",
          "[model][weights][quant][compressed-tensors]") {
  std::ifstream in(data("quant_ct_fp8_dynamic"));
  nlohmann::json config = nlohmann::json::parse(in);
  config["quantization_config"]["ignore"] =
      nlohmann::json::array({"lm_head", "re:.*self_attn\\..*"});
  const ModelSpec m = parse_hf_config(config, "re.json");
  // Attention in bf16: (262,144 + 65,536 * 2 + 262,144) * 2 = 1,310,720 per layer; the MLP in
  // fp8 with per-channel fp32 scales: 3 * 524,288 + 4 * (1,024 + 1,024 + 512) = 1,583,104.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (1'310'720 + 1'583'104));
  CHECK(bytes_of(m) == 7'889'920);
}

TEST_CASE("compressed-tensors INT8 W8A8 under the old compression_config key",
          "[model][weights][quant][compressed-tensors]") {
  const ModelSpec m = load("quant_ct_int8_compression_config");
  CHECK(m.checkpoint_quantization == "compressed-tensors");
  CHECK(m.checkpoint_quant->method == QuantMethod::kInt8);
  // int8 weights + fp32 per-channel scales (15,360 B) + a static fp32 input_scale per module
  // (7 * 4 = 28 B) per layer.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (2'228'224 + 15'360 + 28));
  CHECK(bytes_of(m) == 6'589'496);
}

TEST_CASE("compressed-tensors naive-quantized keeps one byte per value with int8 zero points",
          "[model][weights][quant][compressed-tensors]") {
  std::ifstream in(data("quant_ct_w4a16"));
  nlohmann::json config = nlohmann::json::parse(in);
  config["quantization_config"]["format"] = "naive-quantized";
  config["quantization_config"]["config_groups"]["group_0"]["weights"]["symmetric"] = false;
  const ModelSpec m = parse_hf_config(config, "naive.json");
  // 4-bit values in int8 containers: 2,228,224 B; fp32 scales and int8 zeros per group of
  // 128: groups * out = 4*512 + 2*4*128 + 4*512 + 2*4*1024 + 8*512 = 17,408 -> 17,408 * 5.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (2'228'224 + 17'408 * 5));
  CHECK(bytes_of(m) == 6'732'800);
}

TEST_CASE("a malformed compressed-tensors config names the key under quantization_config",
          "[model][quant][errors][compressed-tensors]") {
  const std::string bits = error_after([](nlohmann::json& q) {
    q["config_groups"]["group_0"]["weights"]["num_bits"] = 5;
  });
  CHECK_THAT(bits, Catch::Contains("ct/config.json") &&
                       Catch::Contains("quantization_config.config_groups.group_0.weights."
                                       "num_bits"));
  CHECK_THAT(error_after([](nlohmann::json& q) {
               q["config_groups"]["group_0"]["weights"]["strategy"] = "row";
             }),
             Catch::Contains("weights.strategy") && Catch::Contains("row"));
  CHECK_THAT(error_after([](nlohmann::json& q) {
               q["config_groups"]["group_0"]["weights"].erase("group_size");
             }),
             Catch::Contains("weights.group_size") && Catch::Contains("missing"));
  CHECK_THAT(error_after([](nlohmann::json& q) { q["format"] = "bitmask"; }),
             Catch::Contains("quantization_config.format") && Catch::Contains("bitmask"));
  CHECK_THAT(error_after([](nlohmann::json& q) { q["ignore"] = "lm_head"; }),
             Catch::Contains("quantization_config.ignore"));
  CHECK_THAT(error_after([](nlohmann::json& q) {
               q["ignore"] = nlohmann::json::array({"re:(["});
             }),
             Catch::Contains("quantization_config.ignore") &&
                 Catch::Contains("not a valid regular expression"));
  CHECK_THAT(error_after([](nlohmann::json& q) { q["kv_cache_scheme"] = {{"num_bits", 4}}; }),
             Catch::Contains("quantization_config.kv_cache_scheme.num_bits"));
  CHECK_THAT(error_after([](nlohmann::json& q) {
               q["config_groups"]["group_1"] = q["config_groups"]["group_0"];
               q["config_groups"]["group_1"].erase("targets");
             }),
             Catch::Contains("quantization_config.config_groups.group_1.targets") &&
                 Catch::Contains("missing or empty"));
  CHECK_THAT(error_after([](nlohmann::json& q) {
               q["config_groups"]["group_0"]["targets"] = nlohmann::json::array({"re:(["});
             }),
             Catch::Contains("quantization_config.config_groups.group_0.targets") &&
                 Catch::Contains("not a valid regular expression"));
}

namespace {

// The tiny Llama's W4A16 config with a second group: FP8 per-channel weights and dynamic
// per-token activations (float-quantized) for the modules `targets` names, as llm-compressor
// writes a mixed-precision recipe (top-level format "mixed-precision", one format per group).
nlohmann::json mixed(const nlohmann::json& targets, bool fp8_first) {
  std::ifstream in(data("quant_ct_w4a16"));
  nlohmann::json config = nlohmann::json::parse(in);
  nlohmann::json& q = config["quantization_config"];
  q["format"] = "mixed-precision";
  nlohmann::json w4 = q["config_groups"]["group_0"];
  w4["format"] = "pack-quantized";
  nlohmann::json fp8 = {
      {"targets", targets},
      {"format", "float-quantized"},
      {"weights",
       {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true},
        {"dynamic", false}}},
      {"input_activations",
       {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}}}};
  q["config_groups"] = {{"group_0", fp8_first ? fp8 : w4}, {"group_1", fp8_first ? w4 : fp8}};
  return config;
}

}  // namespace

TEST_CASE("compressed-tensors with several config_groups: a module takes the scheme of the "
          "target naming it, every other linear the Linear group's",
          "[model][weights][quant][compressed-tensors]") {
  // Attention in FP8 per channel (in*out + 4*out B): q, o 262,144 + 2,048 = 264,192;
  // k, v 65,536 + 512 = 66,048: 660,480 per layer. The MLP in W4A16 as above: 3 * 270,352 =
  // 811,056 per layer.
  constexpr std::int64_t kMixed = kKeptBf16 + 2 * (660'480 + 811'056);
  const nlohmann::json attention = nlohmann::json::array({"re:.*self_attn\\..*"});
  for (const bool fp8_first : {false, true}) {
    INFO("FP8 group first: " << fp8_first);
    const ModelSpec m = parse_hf_config(mixed(attention, fp8_first), "mixed.json");
    REQUIRE(m.checkpoint_quant);
    // The "Linear" group is the default scheme (its kernel, GPTQ Marlin, names the method);
    // a name match wins over the class match whichever group comes first.
    CHECK(m.checkpoint_quant->method == QuantMethod::kGptq);
    REQUIRE(m.checkpoint_quant->targeted.size() == 1);
    CHECK(m.checkpoint_quant->targeted[0].method == QuantMethod::kFp8);
    CHECK(bytes_of(m) == kMixed);
    CHECK(bytes_of(m) == 5'045'344);
  }
  // Full module names as targets, and ignore before any target: layer 1's q_proj stays bf16
  // (524,288 B instead of 264,192).
  nlohmann::json named = mixed(nlohmann::json::array({"model.layers.0.self_attn.q_proj",
                                                      "model.layers.1.self_attn.q_proj"}),
                               false);
  named["quantization_config"]["ignore"].push_back("model.layers.1.self_attn.q_proj");
  const ModelSpec m = parse_hf_config(named, "named.json");
  // Layer 0: q in FP8 (264,192) instead of W4A16 (135,184); layer 1: q in bf16.
  constexpr std::int64_t kW4Layer = 2 * 135'184 + 2 * 33'808 + 3 * 270'352;
  CHECK(bytes_of(m) == kKeptBf16 + 2 * kW4Layer - 135'184 + 264'192 - 135'184 + 524'288);
}
