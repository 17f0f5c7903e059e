#include "sim/model/hf_config.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::parse;
using vramsim::model::testing::shared_models_dir;
using vramsim::model::testing::zoo;

namespace {

// The ConfigError text of parsing `json_text`, or "" when it parses.
std::string error_of(const std::string& json_text) {
  try {
    parse(json_text);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

std::size_t problem_count(const std::string& json_text) {
  try {
    parse(json_text);
  } catch (const ConfigError& e) {
    return e.report().problems().size();
  }
  return 0;
}

}  // namespace

TEST_CASE("the reader accepts every real config.json in shared/data/models as users have it",
          "[model][hf_config]") {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared_models_dir())) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    ModelSpec spec;
    REQUIRE_NOTHROW(spec = load_hf_config(entry.path()));
    CHECK(spec.num_layers > 0);
    CHECK(static_cast<std::int64_t>(spec.layers.size()) == spec.num_layers);
    CHECK(spec.head_dim > 0);
    ++n;
  }
  CHECK(n >= 30);
}

TEST_CASE("head_dim comes from the explicit key when present, else hidden / heads",
          "[model][hf_config]") {
  CHECK(zoo("meta-llama/Llama-3.1-8B").head_dim == 4096 / 32);
  CHECK(zoo("Qwen/Qwen3-0.6B").head_dim == 128);  // hidden 1024 / 16 heads would be 64
  CHECK(zoo("google/gemma-7b").head_dim == 256);  // 3072 / 16 would be 192
  CHECK(zoo("mistralai/Mistral-Small-3.1-24B-Instruct-2503").head_dim == 128);  // not 160
  const ModelSpec oss = zoo("openai/gpt-oss-20b");
  CHECK(oss.head_dim == 64);
  CHECK(oss.q_width() == 4096);  // wider than hidden_size 2880
}

TEST_CASE("Gemma configs without tie_word_embeddings tie them, as GemmaConfig's default",
          "[model][hf_config]") {
  CHECK(zoo("google/gemma-7b").tie_word_embeddings);
  CHECK(zoo("google/gemma-2-2b-it").tie_word_embeddings);
  CHECK_FALSE(zoo("meta-llama/Llama-3.1-8B").tie_word_embeddings);
  CHECK(zoo("meta-llama/Llama-3.2-1B").tie_word_embeddings);
}

TEST_CASE("sliding windows follow each family's rule", "[model][hf_config][kv]") {
  SECTION("Mistral-7B-v0.1 slides 4096 tokens on every layer") {
    const ModelSpec m = zoo("mistralai/Mistral-7B-v0.1");
    for (const LayerSpec& l : m.layers) CHECK(l.sliding_window == 4096);
  }
  SECTION("Mistral-7B-v0.3, Mixtral and phi-4 have null windows") {
    CHECK_FALSE(zoo("mistralai/Mistral-7B-v0.3").has_sliding_window());
    CHECK_FALSE(zoo("mistralai/Mixtral-8x7B-v0.1").has_sliding_window());
    CHECK_FALSE(zoo("microsoft/phi-4").has_sliding_window());
  }
  SECTION("Qwen2.5 gives sliding_window but use_sliding_window=false: no window") {
    CHECK_FALSE(zoo("Qwen/Qwen2.5-7B").has_sliding_window());
  }
  SECTION("Gemma-2 alternates local 4096 (even layers) and global layers") {
    const ModelSpec g = zoo("google/gemma-2-9b-it");
    REQUIRE(g.layers.size() == 42);
    for (std::size_t i = 0; i < g.layers.size(); ++i) {
      CHECK(g.layers[i].sliding_window == (i % 2 == 0 ? 4096 : 0));
    }
  }
  SECTION("gpt-oss follows its explicit layer_types") {
    const ModelSpec g = zoo("openai/gpt-oss-20b");
    REQUIRE(g.layers.size() == 24);
    CHECK(g.layers[0].sliding_window == 128);
    CHECK(g.layers[1].sliding_window == 0);
    CHECK(g.layers[22].sliding_window == 128);
    CHECK(g.layers[23].sliding_window == 0);
  }
  SECTION("Qwen with use_sliding_window slides from max_window_layers on") {
    const ModelSpec q = parse(R"({"architectures": ["Qwen2ForCausalLM"],
      "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
      "use_sliding_window": true, "sliding_window": 32, "max_window_layers": 2})");
    CHECK(q.layers[1].sliding_window == 0);
    CHECK(q.layers[2].sliding_window == 32);
    CHECK(q.layers[3].sliding_window == 32);
  }
}

TEST_CASE("family quirks are read: biases, norms, MoE, MLA, old key names", "[model][hf_config]") {
  const ModelSpec qwen2 = zoo("Qwen/Qwen2.5-7B");
  CHECK(qwen2.qkv_bias);
  CHECK_FALSE(qwen2.o_bias);
  const ModelSpec gpt2 = zoo("openai-community/gpt2");
  CHECK(gpt2.intermediate_size == 4 * 768);  // n_inner absent -> 4 * n_embd
  CHECK(gpt2.learned_positions == 1024);
  CHECK(gpt2.norm == NormKind::kLayerNorm);
  const ModelSpec opt = zoo("facebook/opt-13b");
  CHECK(opt.learned_positions == 2048 + 2);
  CHECK(opt.intermediate_size == 20480);
  CHECK(opt.tie_word_embeddings);
  const ModelSpec phi2 = zoo("microsoft/phi-2");
  CHECK(phi2.partial_rotary_factor == Approx(0.4));
  CHECK(phi2.norms_per_layer == 1);
  CHECK(phi2.lm_head_bias);
  const ModelSpec ds = zoo("deepseek-ai/DeepSeek-V2-Lite");
  REQUIRE(ds.mla);
  CHECK(ds.mla->q_lora_rank == 0);
  CHECK(ds.mla->kv_lora_rank == 512);
  REQUIRE(ds.moe);
  CHECK_FALSE(ds.layers[0].moe);  // first_k_dense_replace = 1
  CHECK(ds.num_moe_layers() == 26);
  CHECK(ds.moe->shared_intermediate_size == 2 * 1408);
  const ModelSpec oss = zoo("openai/gpt-oss-20b");
  CHECK(oss.checkpoint_quantization == "mxfp4");
  CHECK(oss.attention_sinks);
  REQUIRE(oss.moe);
  CHECK(oss.moe->num_experts == 32);
  CHECK(oss.moe->num_experts_per_tok == 4);
  const ModelSpec small = zoo("mistralai/Mistral-Small-3.1-24B-Instruct-2503");
  CHECK(small.family == ModelFamily::kMistral3);
  CHECK(small.num_layers == 40);
  CHECK(small.hidden_size == 5120);
  CHECK(small.vision.has_value());
  // granite-3.1 says float32 although its weights are bf16: kept as information only.
  CHECK(zoo("ibm-granite/granite-3.1-8b-instruct").checkpoint_dtype == DType::kFp32);
}

TEST_CASE("Qwen3-MoE honours decoder_sparse_step and mlp_only_layers", "[model][hf_config]") {
  const ModelSpec m = parse(R"({"architectures": ["Qwen3MoeForCausalLM"],
    "num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4, "head_dim": 32,
    "num_key_value_heads": 2, "intermediate_size": 256, "vocab_size": 1000,
    "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "decoder_sparse_step": 2, "mlp_only_layers": [3]})");
  // Sparse when (i + 1) % 2 == 0 and i not in mlp_only_layers: layers 1 and 5.
  std::vector<bool> moe;
  for (const LayerSpec& l : m.layers) moe.push_back(l.moe);
  CHECK(moe == std::vector<bool>{false, true, false, false, false, true});
}

TEST_CASE("an unknown architecture is a ConfigError naming the field, the file and the "
          "supported ones",
          "[model][hf_config][errors]") {
  const std::string e = error_of(R"({"architectures": ["FalconForCausalLM"],
    "num_hidden_layers": 2, "hidden_size": 64})");
  CHECK_THAT(e, Catch::Contains("inline.json"));
  CHECK_THAT(e, Catch::Contains("architectures"));
  CHECK_THAT(e, Catch::Contains("FalconForCausalLM"));
  CHECK_THAT(e, Catch::Contains("LlamaForCausalLM"));
}

TEST_CASE("a config without architectures or model_type is rejected, not guessed",
          "[model][hf_config][errors]") {
  const std::string e = error_of(R"({"num_hidden_layers": 2, "hidden_size": 64})");
  CHECK_THAT(e, Catch::Contains("architectures: missing required field"));
}

TEST_CASE("a missing required field names the file, the field and what was expected",
          "[model][hf_config][errors]") {
  const std::string e = error_of(R"({"architectures": ["LlamaForCausalLM"],
    "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
    "vocab_size": 1000})");
  CHECK_THAT(e, Catch::Contains("inline.json: num_hidden_layers: missing required field "
                                "(expected a positive integer: number of decoder layers)"));
}

TEST_CASE("every problem of a config is reported at once", "[model][hf_config][errors]") {
  // Missing num_hidden_layers, a string hidden_size and a zero vocab_size.
  const std::string text = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": "4096",
    "num_attention_heads": 32, "intermediate_size": 128, "vocab_size": 0})";
  const std::string e = error_of(text);
  CHECK(problem_count(text) == 3);
  CHECK_THAT(e, Catch::Contains("num_hidden_layers: missing required field"));
  CHECK_THAT(e, Catch::Contains("hidden_size: expected an integer, got string \"4096\""));
  CHECK_THAT(e, Catch::Contains("vocab_size: must be a positive integer"));
}

TEST_CASE("shape inconsistencies name the offending field", "[model][hf_config][errors]") {
  SECTION("heads that do not divide hidden_size without an explicit head_dim") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 100, "num_attention_heads": 3, "intermediate_size": 128,
      "vocab_size": 1000})"),
               Catch::Contains("num_attention_heads: must divide hidden_size = 100"));
  }
  SECTION("an explicit head_dim makes any hidden_size acceptable (as Qwen3 and gpt-oss do)") {
    CHECK(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 100, "num_attention_heads": 3, "head_dim": 32, "intermediate_size": 128,
      "vocab_size": 1000})")
              .empty());
  }
  SECTION("KV heads that do not divide the query heads") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3,
      "intermediate_size": 128, "vocab_size": 1000})"),
               Catch::Contains("num_key_value_heads: must divide num_attention_heads = 4"));
  }
  SECTION("a layer_types list of the wrong length") {
    CHECK_THAT(error_of(R"({"architectures": ["GptOssForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 64, "vocab_size": 1000, "num_local_experts": 4,
      "num_experts_per_tok": 2, "sliding_window": 8, "layer_types": ["sliding_attention"]})"),
               Catch::Contains("layer_types: expected a list of 2 entries"));
  }
  SECTION("a boolean of the wrong type") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 1000, "tie_word_embeddings": "yes"})"),
               Catch::Contains("tie_word_embeddings: expected true or false"));
  }
}

TEST_CASE("sizes no model has are refused before they overflow the counts",
          "[model][hf_config][errors]") {
  // Regressions (bad input catalogue): a hidden_size of 10^15 gave a negative parameter count,
  // 10^12 layers threw std::bad_alloc, a vocab_size of 2^62 wrapped silently.
  SECTION("one size above 2^24") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 1000000000000000, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 1000})"),
               Catch::Contains("hidden_size: expected at most 16777216"));
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 18446744073709551615})"),
               Catch::Contains("vocab_size: expected at most 16777216"));
  }
  SECTION("more layers than 2^16") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 100000,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 1000})"),
               Catch::Contains("num_hidden_layers: expected at most 65536 layers"));
  }
  SECTION("sizes that each fit but multiply to more than 10^15 parameters") {
    CHECK_THAT(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 60000,
      "hidden_size": 16000000, "num_attention_heads": 4, "intermediate_size": 16000000,
      "vocab_size": 1000})"),
               Catch::Contains("hidden_size: the sizes describe a model of"));
  }
}

TEST_CASE("Mistral3 without text_config names the nested field", "[model][hf_config][errors]") {
  CHECK_THAT(error_of(R"({"architectures": ["Mistral3ForConditionalGeneration"],
    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 2, "patch_size": 14}})"),
             Catch::Contains("text_config: missing required field"));
  CHECK_THAT(error_of(R"({"architectures": ["Mistral3ForConditionalGeneration"],
    "text_config": {"num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
    "vocab_size": 100},
    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 2, "patch_size": 14}})"),
             Catch::Contains("text_config.hidden_size: missing required field"));
}

TEST_CASE("a file that is not JSON or does not exist is a ConfigError naming the file",
          "[model][hf_config][errors]") {
  const auto dir = std::filesystem::temp_directory_path() / "vramsim_hf_config_test";
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.json";
  {
    std::ofstream(bad) << "{\"architectures\": [\"LlamaForCausalLM\"],,}";
  }
  CHECK_THROWS_WITH(load_hf_config(bad), Catch::Contains("bad.json") &&
                                             Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(load_hf_config(dir / "missing.json"), Catch::Contains("missing.json"));
  // Regression: a number beyond double's range escaped as nlohmann's out_of_range.
  {
    std::ofstream(bad) << "{\"hidden_size\": 1e400}";
  }
  CHECK_THROWS_WITH(load_hf_config(bad), Catch::Contains("bad.json") &&
                                             Catch::Contains("number overflow parsing '1e400'"));
  std::filesystem::remove_all(dir);
}
