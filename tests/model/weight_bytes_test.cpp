#include "sim/model/weight_bytes.hpp"

#include <cstdint>
#include <string>

#include "sim/core/error.hpp"
#include "sim/model/param_count.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::parse;
using vramsim::model::testing::zoo;

namespace {

const WeightFormat kBf16 = make_weight_format(DType::kBf16, "");

// AWQ bytes of an in x out matrix, by hand: 4-bit weights, an fp16 scale and a 4-bit zero per
// group of 128 input rows for each output column.
constexpr std::int64_t awq(std::int64_t in, std::int64_t out) {
  return in * out / 2 + (in / 128) * out * 2 + (in / 128) * out / 2;
}

std::string tp_error(const ModelSpec& m, int tp, int pp = 1) {
  try {
    check_parallelism(m, Parallelism{tp, pp});
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

}  // namespace

TEST_CASE("Llama-3.1-8B in bf16 takes 16,060,522,496 bytes (14.96 GiB) on one device",
          "[model][weights]") {
  const Bytes w = weight_bytes_per_device(zoo("meta-llama/Llama-3.1-8B-Instruct"), kBf16);
  CHECK(w.count() == 16'060'522'496);
  CHECK(format_bytes(w) == "14.96 GiB");
}

TEST_CASE("tensor parallelism splits matrices and vocab but replicates norms",
          "[model][weights][tp]") {
  // TP=2, per device: embedding and lm_head 64128 x 4096 each; per layer q 4096x2048, k and v
  // 4096x512, o 2048x4096, gate/up 4096x7168, down 7168x4096; 65 norms of 4096 replicated.
  constexpr std::int64_t h = 4096;
  constexpr std::int64_t layer = h * 2048 + 2 * h * 512 + 2048 * h + 3 * h * 7168;
  constexpr std::int64_t expected = 2 * (2 * 64128 * h + 32 * layer + 65 * h);
  const Bytes w =
      weight_bytes_per_device(zoo("meta-llama/Llama-3.1-8B"), kBf16, Parallelism{2, 1});
  CHECK(w.count() == expected);
  CHECK(w.count() == 8'030'527'488);
}

TEST_CASE("int4 AWQ keeps embeddings, lm_head and norms in the activation dtype",
          "[model][weights][quant]") {
  const WeightFormat f = make_weight_format(DType::kFp16, "awq");
  constexpr std::int64_t h = 4096;
  constexpr std::int64_t i = 14336;
  constexpr std::int64_t layer = awq(h, 4096) + 2 * awq(h, 1024) + awq(4096, h) +
                                 2 * awq(h, i) + awq(i, h);
  static_assert(layer == 113'311'744);
  constexpr std::int64_t expected = 2 * 128256 * h * 2 + (65 * h) * 2 + 32 * layer;
  CHECK(weight_bytes_per_device(zoo("meta-llama/Llama-3.1-8B"), f).count() == expected);
  CHECK(expected == 5'727'854'592);
  CHECK(nominal_bits_per_weight(f) == Approx(4.15625));
}

TEST_CASE("GPTQ adds an int32 g_idx per input row to AWQ's storage", "[model][weights][quant]") {
  const WeightFormat awq_f = make_weight_format(DType::kFp16, "awq_marlin");
  const WeightFormat gptq_f = make_weight_format(DType::kFp16, "gptq");
  CHECK(matrix_bytes(awq_f, TensorKind::kLinear, 4096, 1024).count() == awq(4096, 1024));
  CHECK(matrix_bytes(gptq_f, TensorKind::kLinear, 4096, 1024).count() ==
        awq(4096, 1024) + 4096 * 4);
}

TEST_CASE("fp8 stores one byte per weight plus one fp32 scale per matrix",
          "[model][weights][quant]") {
  const WeightFormat f = make_weight_format(DType::kBf16, "fp8");
  // 7 matrices per layer with a 4-byte scale each; 8,030,261,248 weights of which the
  // embedding, lm_head and norms (1,050,673,152 + 266,240) stay bf16.
  constexpr std::int64_t matrices = 32LL * 218'103'808;
  constexpr std::int64_t expected = matrices + 32 * 7 * 4 + 2 * (1'050'673'152 + 65 * 4096);
  CHECK(weight_bytes_per_device(zoo("meta-llama/Llama-3.1-8B"), f).count() == expected);
  CHECK(expected == 9'081'201'536);
}

TEST_CASE("int8 (w8a8) stores one fp32 scale per output channel", "[model][weights][quant]") {
  const WeightFormat f = make_weight_format(DType::kBf16, "w8a8");
  CHECK(matrix_bytes(f, TensorKind::kLinear, 4096, 1024).count() == 4096 * 1024 + 1024 * 4);
  CHECK(matrix_bytes(f, TensorKind::kVector, 1, 4096).count() == 4096 * 2);
}

TEST_CASE("mxfp4 quantizes only the routed experts of gpt-oss, at 4.25 bits per weight",
          "[model][weights][quant]") {
  const ModelSpec m = zoo("openai/gpt-oss-20b");
  const WeightFormat f = make_weight_format(DType::kBf16, m.checkpoint_quantization);
  CHECK(f.quantization == QuantMethod::kMxfp4);
  // Expert matrices: 24 layers * 32 experts * 3 * 2880 * 2880 weights at 4.25 bits; the other
  // 1,804,459,584 parameters (attention, expert biases, routers, embeddings) in bf16.
  constexpr std::int64_t experts = 24LL * 32 * 3 * 2880 * 2880;
  const std::int64_t rest = count_params(m).total - experts;
  CHECK(rest == 1'804'459'584);
  CHECK(weight_bytes_per_device(m, f).count() == experts * 17 / 32 + 2 * rest);
  CHECK(matrix_bytes(f, TensorKind::kLinear, 2880, 2880).count() == 2880 * 2880 * 2);
}

TEST_CASE("an unknown quantization name lists the valid ones", "[model][weights][quant]") {
  CHECK_THROWS_WITH(make_weight_format(DType::kBf16, "int3"),
                    Catch::Contains("quantization") && Catch::Contains("int3") &&
                        Catch::Contains("awq") && Catch::Contains("mxfp4"));
}

TEST_CASE("the vocab is padded to a multiple of 64 before the TP split, as vLLM does",
          "[model][weights][tp]") {
  // GPT-2: 50257 rows -> 50304 (tied, one copy at pp = 1).
  const ModelSpec m = zoo("openai-community/gpt2");
  CHECK(weight_bytes_per_device(m, kBf16).count() == 2 * (124'439'808 + 47 * 768));
}

TEST_CASE("pipeline stages split layers as vLLM's get_pp_indices", "[model][weights][pp]") {
  auto sizes = [](std::int64_t layers, int pp) {
    std::vector<std::int64_t> out;
    for (int r = 0; r < pp; ++r) out.push_back(stage_layers(layers, pp, r).size());
    return out;
  };
  CHECK(sizes(22, 4) == std::vector<std::int64_t>{5, 6, 6, 5});
  CHECK(sizes(5, 3) == std::vector<std::int64_t>{2, 2, 1});
  CHECK(sizes(32, 4) == std::vector<std::int64_t>{8, 8, 8, 8});
  CHECK(sizes(61, 4) == std::vector<std::int64_t>{15, 15, 16, 15});
  CHECK(stage_layers(22, 4, 2).begin == 11);
}

TEST_CASE("a tied lm_head costs a full copy on the last stage only when pp > 1",
          "[model][weights][pp]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.2-1B");
  CHECK(weight_bytes_per_device(m, kBf16).count() == 2LL * 1'235'814'400);
  const Parallelism pp2{1, 2};
  const Bytes first = weight_bytes_on_stage(m, kBf16, pp2, 0);  // embedding + layers 0-7
  const Bytes last = weight_bytes_on_stage(m, kBf16, pp2, 1);   // layers 8-15 + norm + lm_head
  CHECK((last - first).count() == 2048 * 2);                    // the final norm
  CHECK((first + last).count() == 2LL * (1'235'814'400 + 128256LL * 2048));
  CHECK(weight_bytes_per_device(m, kBf16, pp2) == last);
}

TEST_CASE("TP that does not divide the attention heads is an error naming the field",
          "[model][weights][tp][errors]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.1-8B");
  const std::string e = tp_error(m, 3);
  CHECK_THAT(e, Catch::Contains("tp: tensor-parallel size 3 does not divide "
                                "num_attention_heads = 32"));
  CHECK_THAT(e, Catch::Contains("valid tp for meta-llama/Llama-3.1-8B: 1, 2, 4, 8, 16, 32"));
  CHECK_THROWS_AS(weight_bytes_per_device(m, kBf16, Parallelism{3, 1}), ConfigError);
  CHECK_THAT(tp_error(m, 1, 33), Catch::Contains("pp: pipeline-parallel size 33 exceeds "
                                                 "num_hidden_layers = 32"));
  CHECK(tp_error(m, 16).empty());  // 8 KV heads replicated twice over 16 ranks
  CHECK(kv_heads_per_device(m, 16) == 1);
}

TEST_CASE("KV heads must split evenly or replicate evenly", "[model][weights][tp][errors]") {
  const ModelSpec m = parse(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
    "hidden_size": 1536, "num_attention_heads": 24, "num_key_value_heads": 8,
    "intermediate_size": 4608, "vocab_size": 1000})");
  CHECK_THAT(tp_error(m, 12), Catch::Contains("exceeds num_key_value_heads = 8"));
  CHECK_THAT(tp_error(m, 6), Catch::Contains("does not divide num_key_value_heads = 8"));
  CHECK(tp_error(m, 4).empty());
  CHECK(tp_error(m, 24).empty());
}

TEST_CASE("MLA's latent projections are replicated across TP ranks", "[model][weights][tp]") {
  const ModelSpec m = zoo("deepseek-ai/DeepSeek-V2-Lite");
  const Bytes tp1 = weight_bytes_per_device(m, kBf16);
  const Bytes tp2 = weight_bytes_per_device(m, kBf16, Parallelism{2, 1});
  // kv_a_proj_with_mqa (2048 x 576), kv_a_layernorm, routers (2048 x 64) and norms stay whole.
  const std::int64_t replicated =
      27 * (2048 * 576 + 512 + 2 * 2048) + 26 * 2048 * 64 + 2048;
  CHECK((2 * tp2 - tp1).count() == 2 * replicated);
}
