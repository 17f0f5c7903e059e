// Weight bytes of bitsandbytes, NVIDIA ModelOpt and compressed-tensors NVFP4 checkpoints, against
// bytes worked out by hand from the tensors vLLM holds on the device (the layouts are written
// out, with their sources, at the top of sim/model/hf_quant_bnb_modelopt.cpp):
//
//   bitsandbytes 4-bit   weight uint8 [in*out/2]; absmax fp32 per 64 weights (double quant is
//                        undone at load by bitsandbytes_loader.dequantize_dq); quant_map fp32 [16]
//   bitsandbytes 8-bit   weight int8 [out, in]; SCB fp32 [out]
//   ModelOpt FP8         weight fp8 [out, in]; weight_scale and input_scale fp32 per module
//   NVFP4 (ModelOpt and  weight uint8 [out, in/2]; weight_scale fp8 e4m3 [out, in/16];
//   compressed-tensors)  weight_scale_2 / weight_global_scale fp32 (+ input scale fp32)
//
// The test model (tests/model/data, synthetic; see quant_config_test.cpp): a Llama decoder with
// hidden 512, intermediate 1024, 8 query and 2 KV heads of 64, 2 layers, vocab 1024, untied.
// Linear layers per layer (in x out): q 512x512, k 512x128, v 512x128, o 512x512, gate and up
// 512x1024, down 1024x512. Kept in bf16: embed_tokens and lm_head 1024 x 512 (1,048,576 B
// each), 5 norms of 512 (5,120 B): 2,102,272 B.
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
constexpr std::int64_t kLmHeadBf16 = 1024 * 512 * 2;  // 1,048,576

std::filesystem::path data(const std::string& name) {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "model" / "data" / name;
}

nlohmann::json config_of(const std::string& name) {
  std::ifstream in(data(name + ".json"));
  return nlohmann::json::parse(in);
}

std::int64_t bytes_of(const ModelSpec& m, const std::string& flag = "",
                      DType dtype = DType::kBf16) {
  return weight_bytes_per_device(m, make_weight_format(dtype, flag, m)).count();
}

// The report of parsing `config`, or "" when it parses.
std::string error_of(const nlohmann::json& config, const std::string& source = "q/config.json") {
  try {
    parse_hf_config(config, source);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

// The tiny Llama with `q` as its quantization_config.
nlohmann::json with_quant(const nlohmann::json& q) {
  nlohmann::json c = config_of("quant_bnb_nf4");
  c["quantization_config"] = q;
  return c;
}

}  // namespace

TEST_CASE("bitsandbytes nf4 with double quant: fp32 absmax per 64 weights on the device",
          "[model][weights][quant][bitsandbytes]") {
  const ModelSpec m = load_hf_config(data("quant_bnb_nf4.json"));
  REQUIRE(m.checkpoint_quant);
  CHECK(m.checkpoint_quantization == "bitsandbytes");
  CHECK(m.checkpoint_quant->method == QuantMethod::kBitsAndBytes);
  // Per matrix: in*out/2 (two codes per byte) + in*out/64 * 4 (absmax) + 64 (quant_map):
  //   q, o 512x512:      131,072 + 16,384 + 64 = 147,520
  //   k, v 512x128:       32,768 +  4,096 + 64 =  36,928
  //   gate, up, down:    262,144 + 32,768 + 64 = 294,976
  constexpr std::int64_t attention = 2 * 147'520 + 2 * 36'928;  // 368,896
  constexpr std::int64_t mlp = 3 * 294'976;                      // 884,928
  // llm_int8_skip_modules "model.layers.1.mlp" keeps layer 1's MLP in bf16 (3 * 1,048,576);
  // "lm_head" was never quantized (a ParallelLMHead, not a LinearBase).
  constexpr std::int64_t mlp_bf16 = 3 * 512 * 1024 * 2;
  CHECK(bytes_of(m) == kKeptBf16 + (attention + mlp) + (attention + mlp_bf16));
  CHECK(bytes_of(m) == 6'870'720);

  SECTION("double quant shrinks the file, not the device; fp4 stores as nf4") {
    nlohmann::json c = config_of("quant_bnb_nf4");
    c["quantization_config"]["bnb_4bit_use_double_quant"] = false;
    c["quantization_config"]["bnb_4bit_quant_type"] = "fp4";
    CHECK(bytes_of(parse_hf_config(c, "q/config.json")) == 6'870'720);
  }
  SECTION("the skipped MLP quantized too: 3,145,728 - 884,928 = 2,260,800 B less") {
    nlohmann::json c = config_of("quant_bnb_nf4");
    c["quantization_config"]["llm_int8_skip_modules"] = nlohmann::json::array({"lm_head"});
    CHECK(bytes_of(parse_hf_config(c, "q/config.json")) == 6'870'720 - 2'260'800);
  }
}

TEST_CASE("bitsandbytes 8-bit (LLM.int8()): int8 weights and an fp32 SCB per output row",
          "[model][weights][quant][bitsandbytes]") {
  const ModelSpec m = load_hf_config(data("quant_bnb_int8.json"));
  REQUIRE(m.checkpoint_quant);
  // Per matrix in*out + 4*out: q, o 262,144 + 2,048 = 264,192; k, v 65,536 + 512 = 66,048;
  // gate, up 524,288 + 4,096 = 528,384; down 524,288 + 2,048 = 526,336.
  constexpr std::int64_t layer = 2 * 264'192 + 2 * 66'048 + 2 * 528'384 + 526'336;
  static_assert(layer == 2'243'584);
  CHECK(bytes_of(m) == kKeptBf16 + 2 * layer);
  CHECK(bytes_of(m) == 6'589'440);
}

TEST_CASE("the bitsandbytes flag quantizes an unquantized checkpoint to nf4 at load",
          "[model][weights][quant][bitsandbytes]") {
  nlohmann::json c = config_of("quant_bnb_nf4");
  c.erase("quantization_config");
  const ModelSpec m = parse_hf_config(c, "plain/config.json");
  // bitsandbytes_loader._unquantized_generator: quantize_4bit nf4 on every linear layer, both
  // layers now: 2 * (368,896 + 884,928) = 2,507,648 B.
  CHECK(bytes_of(m, "bitsandbytes") == kKeptBf16 + 2'507'648);
  CHECK(nominal_bits_per_weight(make_weight_format(DType::kBf16, "bitsandbytes")) ==
        Approx(4.0 + 32.0 / 64));
}

TEST_CASE("ModelOpt FP8 from hf_quant_config.json beside config.json",
          "[model][weights][quant][modelopt]") {
  const ModelSpec m = load_hf_config(data("quant_modelopt_fp8"));
  REQUIRE(m.checkpoint_quant);
  CHECK(m.checkpoint_quantization == "modelopt");
  CHECK(m.checkpoint_quant->method == QuantMethod::kModelOpt);
  CHECK(m.checkpoint_quant->kv_cache_bits == 8);
  CHECK(m.checkpoint_quant->config_file.find("hf_quant_config.json") != std::string::npos);
  // 2,228,224 fp8 weights and 7 modules * (weight_scale 4 + input_scale 4) per layer; lm_head
  // excluded (exclude_modules) stays bf16. The same bytes as fp8 static per-tensor.
  CHECK(bytes_of(m) == kKeptBf16 + 2 * (2'228'224 + 7 * 8));
  CHECK(bytes_of(m) == 6'558'832);
  CHECK(bytes_of(m, "modelopt") == 6'558'832);

  SECTION("a --quantization that contradicts it names the file's quant_algo key") {
    CHECK_THROWS_WITH(make_weight_format(DType::kBf16, "fp8", m),
                      Catch::Contains("quantization.quant_algo") &&
                          Catch::Contains("hf_quant_config.json") &&
                          Catch::Contains("modelopt"));
  }
}

TEST_CASE("ModelOpt quantizes lm_head unless excluded, and matches exclude wildcards",
          "[model][weights][quant][modelopt]") {
  const nlohmann::json fp8 = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}};
  // lm_head 1024 x 512 in fp8 + 8 B of scales instead of 1,048,576 B of bf16.
  CHECK(bytes_of(parse_hf_config(with_quant(fp8), "q/config.json")) ==
        6'558'832 - kLmHeadBf16 + 524'288 + 8);
  nlohmann::json wild = fp8;
  wild["ignore"] = {"lm_head", "model.layers.1.mlp*"};  // ModelOpt's fnmatch wildcard
  // Layer 1's gate, up, down back to bf16: + 3 * (1,048,576 - 524,288 - 8).
  CHECK(bytes_of(parse_hf_config(with_quant(wild), "q/config.json")) ==
        6'558'832 + 3 * (1'048'576 - 524'288 - 8));
  nlohmann::json channel = {{"quant_method", "modelopt"},
                            {"quant_algo", "FP8_PER_CHANNEL_PER_TOKEN"},
                            {"ignore", {"lm_head"}}};
  // fp32 weight_scale per output row, no input_scale: out rows per layer 512*2 + 128*2 + 1024*2
  // + 512 = 3,840 -> 15,360 B.
  CHECK(bytes_of(parse_hf_config(with_quant(channel), "q/config.json")) ==
        kKeptBf16 + 2 * (2'228'224 + 15'360));
}

TEST_CASE("ModelOpt NVFP4: packed e2m1, an fp8 scale per 16, two fp32 scales per module",
          "[model][weights][quant][modelopt][nvfp4]") {
  const ModelSpec m = load_hf_config(data("quant_modelopt_nvfp4.json"));
  REQUIRE(m.checkpoint_quant);
  // quant_method says modelopt; quant_algo NVFP4 makes it modelopt_fp4, as vLLM's
  // ModelOptNvFp4Config.override_quantization_method does.
  CHECK(m.checkpoint_quantization == "modelopt_fp4");
  CHECK(m.checkpoint_quant->method == QuantMethod::kModelOptFp4);
  // Per matrix in*out/2 + in*out/16 + 8:
  //   q, o:   131,072 + 16,384 + 8 = 147,464;  k, v: 32,768 + 4,096 + 8 = 36,872;
  //   gate, up, down: 262,144 + 32,768 + 8 = 294,920.
  constexpr std::int64_t layer = 2 * 147'464 + 2 * 36'872 + 3 * 294'920;
  static_assert(layer == 1'253'432);
  CHECK(bytes_of(m) == kKeptBf16 + 2 * layer);
  CHECK(bytes_of(m) == 4'609'136);
  CHECK(bytes_of(m, "modelopt_fp4") == 4'609'136);
  CHECK(nominal_bits_per_weight(make_weight_format(DType::kBf16, "", m)) == Approx(4.5));
}

TEST_CASE("compressed-tensors nvfp4-pack-quantized: strategy tensor_group, group 16",
          "[model][weights][quant][compressed-tensors][nvfp4]") {
  const ModelSpec m = load_hf_config(data("quant_ct_nvfp4.json"));
  REQUIRE(m.checkpoint_quant);
  CHECK(m.checkpoint_quantization == "compressed-tensors");
  CHECK(m.checkpoint_quant->method == QuantMethod::kModelOptFp4);
  // CompressedTensorsW4A4Fp4: weight_packed, weight_scale, weight_global_scale and
  // input_global_scale: the bytes of ModelOpt's NVFP4 above.
  CHECK(bytes_of(m) == 4'609'136);
  SECTION("weight-only (W4A16 NVFP4) drops the input scale: 7 * 4 B less per layer") {
    nlohmann::json c = config_of("quant_ct_nvfp4");
    c["quantization_config"]["config_groups"]["group_0"].erase("input_activations");
    CHECK(bytes_of(parse_hf_config(c, "ct/config.json")) == 4'609'136 - 2 * 7 * 4);
  }
  SECTION("tensor_group elsewhere, or NVFP4 with other groups, is refused on the key") {
    nlohmann::json c = config_of("quant_ct_nvfp4");
    c["quantization_config"]["config_groups"]["group_0"]["weights"]["group_size"] = 32;
    CHECK_THAT(error_of(c), Catch::Contains("config_groups.group_0.weights.group_size") &&
                                Catch::Contains("16"));
    c = config_of("quant_ct_nvfp4");
    c["quantization_config"]["format"] = "pack-quantized";
    c["quantization_config"]["config_groups"]["group_0"].erase("format");
    CHECK_THAT(error_of(c), Catch::Contains("config_groups.group_0.weights.strategy") &&
                                Catch::Contains("tensor_group"));
  }
}

TEST_CASE("modelopt on an unquantized checkpoint is refused naming the flag",
          "[model][quant][modelopt][errors]") {
  nlohmann::json c = config_of("quant_bnb_nf4");
  c.erase("quantization_config");
  const ModelSpec m = parse_hf_config(c, "plain/config.json");
  CHECK_THROWS_WITH(make_weight_format(DType::kBf16, "modelopt", m),
                    Catch::Contains("--quantization modelopt") &&
                        Catch::Contains("hf_quant_config.json"));
  CHECK_THROWS_WITH(make_weight_format(DType::kBf16, "modelopt_fp4", m),
                    Catch::Contains("--quantization modelopt_fp4"));
}

TEST_CASE("malformed bitsandbytes and ModelOpt configs are refused naming file and key",
          "[model][quant][errors]") {
  nlohmann::json both = config_of("quant_bnb_int8")["quantization_config"];
  both["load_in_4bit"] = true;
  CHECK_THAT(error_of(with_quant(both)), Catch::Contains("q/config.json") &&
                                             Catch::Contains("quantization_config.load_in_8bit"));
  nlohmann::json storage = config_of("quant_bnb_nf4")["quantization_config"];
  storage["bnb_4bit_quant_storage"] = "bfloat16";
  CHECK_THAT(error_of(with_quant(storage)),
             Catch::Contains("quantization_config.bnb_4bit_quant_storage") &&
                 Catch::Contains("uint8"));
  nlohmann::json type = config_of("quant_bnb_nf4")["quantization_config"];
  type["bnb_4bit_quant_type"] = "int4";
  CHECK_THAT(error_of(with_quant(type)), Catch::Contains("quantization_config.bnb_4bit_quant_type"));
  nlohmann::json skip = config_of("quant_bnb_nf4")["quantization_config"];
  skip["llm_int8_skip_modules"] = "lm_head";
  CHECK_THAT(error_of(with_quant(skip)),
             Catch::Contains("quantization_config.llm_int8_skip_modules"));
  CHECK_THAT(error_of(with_quant({{"quant_method", "modelopt"}, {"quant_algo", "INT4_AWQ"}})),
             Catch::Contains("quantization_config.quant_algo") && Catch::Contains("INT4_AWQ"));
  CHECK_THAT(error_of(with_quant({{"quant_method", "modelopt_fp4"}})),
             Catch::Contains("quantization_config.quant_algo") && Catch::Contains("missing"));
  CHECK_THAT(error_of(with_quant({{"quant_method", "modelopt"},
                                  {"quantization", {{"quant_algo", "NVFP4"},
                                                    {"group_size", 32}}}})),
             Catch::Contains("quantization_config.quantization.group_size"));
}

TEST_CASE("a bad hf_quant_config.json is reported naming that file and its key",
          "[model][quant][modelopt][errors]") {
  const nlohmann::json config = config_of("quant_modelopt_fp8/config");
  const auto error_with = [&](const nlohmann::json& file) {
    try {
      parse_hf_config(config, "m/config.json", &file, "m/hf_quant_config.json");
    } catch (const ConfigError& e) {
      return e.report().format();
    }
    return std::string();
  };
  const std::string algo = error_with(
      {{"producer", {{"name", "modelopt"}}}, {"quantization", {{"quant_algo", "FP4"}}}});
  CHECK_THAT(algo, Catch::Contains("m/hf_quant_config.json") &&
                       Catch::Contains("quantization.quant_algo") && Catch::Contains("FP4"));
  CHECK_THAT(algo, !Catch::Contains("m/config.json"));
  CHECK_THAT(error_with({{"quantization", {{"quant_algo", "FP8"},
                                           {"exclude_modules", "lm_head"}}}}),
             Catch::Contains("quantization.exclude_modules"));
  CHECK_THAT(error_with({{"quantization", {{"quant_algo", "FP8"},
                                           {"kv_cache_quant_algo", "INT8"}}}}),
             Catch::Contains("quantization.kv_cache_quant_algo"));
  CHECK_THAT(error_with(nlohmann::json::array()), Catch::Contains("m/hf_quant_config.json"));
  // config.json's own quantization_config wins over the file, as in vLLM.
  nlohmann::json own = config;
  own["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}};
  const nlohmann::json file = {{"quantization", {{"quant_algo", "NVFP4"}}}};
  CHECK(parse_hf_config(own, "m/config.json", &file, "m/hf_quant_config.json")
            .checkpoint_quantization == "fp8");
}
