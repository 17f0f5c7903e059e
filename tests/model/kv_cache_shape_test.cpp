#include "sim/model/kv_cache_shape.hpp"

#include <cstdint>

#include "sim/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::zoo;

TEST_CASE("Llama-3.1-8B keeps 128 KiB of bf16 KV per token on one GPU and 64 KiB at TP=2",
          "[model][kv]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.1-8B-Instruct");
  // 32 layers * 2 (K and V) * 8 KV heads * 128 * 2 B.
  CHECK(kv_bytes_per_token(m, DType::kBf16) == Bytes(131072));
  CHECK(kv_bytes_per_token(m, DType::kBf16) == KiB(128));
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{2, 1}) == KiB(64));
  CHECK(kv_bytes_per_token(m, DType::kFp8) == KiB(64));
  // TP=8 leaves one KV head per rank (32 layers * 512 B); TP=16 replicates the 8 heads, so
  // each rank still holds one.
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{8, 1}) == KiB(16));
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{16, 1}) == KiB(16));
  // PP=2: each stage holds 16 layers.
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{1, 2}) == KiB(64));
}

TEST_CASE("Llama-3.1-70B keeps 320 KiB of bf16 KV per token", "[model][kv]") {
  CHECK(kv_bytes_per_token(zoo("meta-llama/Llama-3.1-70B"), DType::kBf16) == KiB(320));
}

TEST_CASE("DeepSeek-V2-Lite's MLA cache is the 576-wide latent, not split by TP", "[model][kv]") {
  const ModelSpec m = zoo("deepseek-ai/DeepSeek-V2-Lite");
  const Bytes per_token(27 * (512 + 64) * 2);
  CHECK(kv_bytes_per_token(m, DType::kBf16) == per_token);
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{2, 1}) == per_token);
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{4, 1}) == per_token);
}

TEST_CASE("Mistral-7B-v0.1's 4096-token window caps every layer's cache", "[model][kv]") {
  const ModelSpec m = zoo("mistralai/Mistral-7B-v0.1");
  const Bytes per_token = kv_bytes_per_token(m, DType::kBf16);
  CHECK(per_token == KiB(128));
  CHECK(kv_bytes_for_tokens(m, DType::kBf16, {}, 1000) == 1000 * per_token);
  CHECK(kv_bytes_for_tokens(m, DType::kBf16, {}, 32768) == 4096 * per_token);
  // v0.3 has no window.
  CHECK(kv_bytes_for_tokens(zoo("mistralai/Mistral-7B-v0.3"), DType::kBf16, {}, 32768) ==
        32768 * per_token);
}

TEST_CASE("Gemma-2's local layers hold 4096 tokens while its global layers hold all",
          "[model][kv]") {
  const ModelSpec m = zoo("google/gemma-2-9b-it");
  const std::vector<LayerKv> layers = kv_layers(m, DType::kBf16);
  REQUIRE(layers.size() == 42);
  const Bytes per_layer(2 * 8 * 256 * 2);
  CHECK(layers[0].bytes_per_token == per_layer);
  CHECK(layers[0].sliding_window == 4096);
  CHECK(layers[1].sliding_window == 0);
  CHECK(kv_bytes_for_tokens(m, DType::kBf16, {}, 8192) ==
        21 * 4096 * per_layer + 21 * 8192 * per_layer);
  CHECK(kv_bytes_for_tokens(m, DType::kBf16, {}, 100) == 42 * 100 * per_layer);
}

TEST_CASE("gpt-oss's sliding layers from layer_types hold 128 tokens", "[model][kv]") {
  const ModelSpec m = zoo("openai/gpt-oss-20b");
  const Bytes per_layer(2 * 8 * 64 * 2);
  CHECK(kv_bytes_per_token(m, DType::kBf16) == 24 * per_layer);
  CHECK(kv_bytes_for_tokens(m, DType::kBf16, {}, 10000) ==
        12 * 128 * per_layer + 12 * 10000 * per_layer);
}

TEST_CASE("the KV view of a pipeline stage lists that stage's layers", "[model][kv][pp]") {
  const ModelSpec m = zoo("meta-llama/Llama-3.1-8B");
  const std::vector<LayerKv> last = kv_layers(m, DType::kBf16, Parallelism{1, 3}, 2);
  // 32 layers over 3 stages: 11, 11, 10.
  REQUIRE(last.size() == 10);
  CHECK(last.front().layer == 22);
  CHECK(kv_bytes_per_token(m, DType::kBf16, Parallelism{1, 3}) == 11 * KiB(4));
  CHECK_THROWS_AS(kv_bytes_per_token(m, DType::kBf16, Parallelism{3, 1}), ConfigError);
}
