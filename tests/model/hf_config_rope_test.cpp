// The default and the largest max_model_len a config's RoPE scaling gives, as vLLM derives them
// (vllm/config/model.py _get_and_verify_max_len; sim/model/hf_config_rope.hpp), on the shared
// real configs (../shared/data/models) and on synthetic edits of them; and the refusal of
// malformed rotary keys and dtypes.
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/hf_config.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;

namespace {

nlohmann::json shared_config(const std::string& file) {
  std::ifstream in(testing::shared_models_dir() / file);
  return nlohmann::json::parse(in);
}

ModelSpec parse(const nlohmann::json& config) { return parse_hf_config(config, "r/config.json"); }

std::string error_of(const nlohmann::json& config) {
  try {
    parse(config);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

// Llama-2-7B (max_position_embeddings 4096, no rope_scaling) with `rope` as its rope_scaling.
nlohmann::json llama2_with(const nlohmann::json& rope, const std::string& key = "rope_scaling") {
  nlohmann::json c = shared_config("meta-llama__Llama-2-7b-hf.json");
  c[key] = rope;
  return c;
}

}  // namespace

TEST_CASE("real configs: llama3 scaling keeps 131,072 while YaRN scales the original context",
          "[model][hf_config][rope]") {
  // Llama-3.1: rope_type llama3, factor 8, max_position_embeddings 131072 -> not scaled again.
  const ModelSpec llama = parse(shared_config("meta-llama__Llama-3.1-8B.json"));
  CHECK(llama.max_model_len_limit() == 131'072);
  CHECK(llama.max_model_len_default() == 131'072);
  // gpt-oss-20b: yarn, factor 32 over original_max_position_embeddings 4096 = 131,072.
  const ModelSpec oss = parse(shared_config("openai__gpt-oss-20b.json"));
  CHECK(oss.derived_max_model_len == 32 * 4096);
  CHECK(oss.max_model_len_default() == 131'072);
  // DeepSeek-V2-Lite: legacy "type": "yarn", factor 40 over 4096 = 163,840.
  const ModelSpec ds = parse(shared_config("deepseek-ai__DeepSeek-V2-Lite.json"));
  CHECK(ds.derived_max_model_len == 40 * 4096);
  CHECK(ds.derived_max_model_len == 163'840);
  // Qwen2.5-7B ships without rope_scaling: its max_position_embeddings, 131,072.
  nlohmann::json qwen = shared_config("Qwen__Qwen2.5-7B.json");
  REQUIRE(!qwen.contains("rope_scaling"));
  CHECK(parse(qwen).max_model_len_default() == qwen["max_position_embeddings"].get<std::int64_t>());
}

TEST_CASE("Qwen2.5 with the model card's YaRN block: factor 4 on 32,768 gives 131,072",
          "[model][hf_config][rope]") {
  nlohmann::json qwen = shared_config("Qwen__Qwen2.5-14B.json");
  qwen["max_position_embeddings"] = 32768;
  qwen["rope_scaling"] = {{"factor", 4.0}, {"original_max_position_embeddings", 32768},
                          {"type", "yarn"}};
  const ModelSpec m = parse(qwen);
  CHECK(m.max_position_embeddings == 32'768);
  CHECK(m.max_model_len_limit() == 131'072);
  CHECK(m.max_model_len_default() == 131'072);
  CHECK(m.rotary_positions() == 131'072);  // YaRNScalingRotaryEmbedding: original * factor rows
}

TEST_CASE("linear and dynamic scaling multiply max_position_embeddings, default does not",
          "[model][hf_config][rope]") {
  CHECK(parse(llama2_with({{"type", "linear"}, {"factor", 2.0}})).max_model_len_default() ==
        8192);
  CHECK(parse(llama2_with({{"rope_type", "dynamic"}, {"factor", 4}})).max_model_len_limit() ==
        16384);
  CHECK(parse(llama2_with({{"rope_type", "default"}})).max_model_len_default() == 4096);
  CHECK(parse(llama2_with(nullptr)).max_model_len_default() == 4096);
  // mrope is vLLM's legacy spelling of default (patch_rope_scaling_dict).
  CHECK(parse(llama2_with({{"type", "mrope"}, {"mrope_section", {16, 24, 24}}}))
            .max_model_len_limit() == 4096);
}

TEST_CASE("LongRoPE defaults to original_max_position_embeddings, up to the full length",
          "[model][hf_config][rope]") {
  // Phi-3-mini-128k style: max_position_embeddings 131072, original 4096 at the top level.
  nlohmann::json c = llama2_with({{"type", "longrope"},
                                  {"short_factor", nlohmann::json::array({1.0})},
                                  {"long_factor", nlohmann::json::array({1.5})}});
  c["max_position_embeddings"] = 131072;
  c["original_max_position_embeddings"] = 4096;
  const ModelSpec m = parse(c);
  CHECK(m.max_model_len_default() == 4096);
  CHECK(m.max_model_len_limit() == 131'072);
  CHECK(m.rotary_positions() == 131'072 + 4096);  // short and long caches, concatenated
}

TEST_CASE("transformers v5 rope_parameters, flat or per layer type",
          "[model][hf_config][rope]") {
  const nlohmann::json yarn = {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 4.0},
                               {"original_max_position_embeddings", 4096}};
  CHECK(parse(llama2_with(yarn, "rope_parameters")).max_model_len_default() == 16384);
  const nlohmann::json per_type = {
      {"full_attention", yarn},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}};
  CHECK(parse(llama2_with(per_type, "rope_parameters")).max_model_len_default() == 16384);
  CHECK(parse(llama2_with({{"rope_type", "default"}, {"rope_theta", 1e4}}, "rope_parameters"))
            .max_model_len_default() == 4096);
}

TEST_CASE("malformed rope_scaling, rotary fraction and dtype are refused naming the key",
          "[model][hf_config][rope][errors]") {
  CHECK_THAT(error_of(llama2_with("yarn")),
             Catch::Contains("r/config.json") && Catch::Contains("rope_scaling") &&
                 Catch::Contains("expected a JSON object"));
  CHECK_THAT(error_of(llama2_with({{"type", "linear"}, {"factor", 0.5}})),
             Catch::Contains("rope_scaling.factor") && Catch::Contains("0.5"));
  CHECK_THAT(error_of(llama2_with({{"type", "ntk-by-parts"}, {"factor", 2.0}})),
             Catch::Contains("rope_scaling.type") && Catch::Contains("ntk-by-parts"));
  CHECK_THAT(error_of(llama2_with({{"factor", 2.0}})),
             Catch::Contains("rope_scaling.rope_type") && Catch::Contains("missing"));
  CHECK_THAT(error_of(llama2_with({{"type", "yarn"}, {"rope_type", "linear"}, {"factor", 2.0}})),
             Catch::Contains("rope_scaling.rope_type") && Catch::Contains("contradicts"));
  CHECK_THAT(error_of(llama2_with({{"type", "yarn"}, {"factor", 4.0}})),
             Catch::Contains("rope_scaling.original_max_position_embeddings"));
  CHECK_THAT(error_of(llama2_with({{"type", "dynamic"}})),
             Catch::Contains("rope_scaling.factor") && Catch::Contains("missing"));
  CHECK_THAT(error_of(llama2_with({{"full_attention", {{"rope_type", "linear"}, {"factor", 0}}}},
                                  "rope_parameters")),
             Catch::Contains("rope_parameters.full_attention.factor"));

  nlohmann::json phi = shared_config("microsoft__phi-2.json");
  phi["partial_rotary_factor"] = 1.5;
  CHECK_THAT(error_of(phi), Catch::Contains("partial_rotary_factor") && Catch::Contains("1.5"));
  nlohmann::json llama = shared_config("meta-llama__Llama-2-7b-hf.json");
  llama["partial_rotary_factor"] = 0;
  CHECK_THAT(error_of(llama), Catch::Contains("partial_rotary_factor") &&
                                  Catch::Contains("(0, 1]"));
  nlohmann::json dtype = shared_config("meta-llama__Llama-2-7b-hf.json");
  dtype["torch_dtype"] = "float13";
  CHECK_THAT(error_of(dtype), Catch::Contains("torch_dtype") && Catch::Contains("float13"));
  // The real configs all pass these checks.
  CHECK(error_of(shared_config("microsoft__phi-2.json")).empty());
}

TEST_CASE("Gemma 3 keeps a local rotary cache beside its global layers' linear-scaled one",
          "[model][hf_config][rope]") {
  // gemma-3-4b-it: 131,072 positions, {linear, factor 8} on the global layers only. vLLM's
  // max_model_len stays unscaled; the caches hold 131,072 (local) + 8 x 131,072 (global) rows
  // (vllm gemma3.py Gemma3Attention, rotary_embedding/linear_scaling_rope.py).
  const ModelSpec s = testing::zoo("google/gemma-3-4b-it");
  CHECK(s.max_model_len_limit() == 131072);
  CHECK(s.rotary_positions() == 131072 + 8 * 131072);
}
