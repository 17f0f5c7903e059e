// Exact weight bytes from safetensors headers: the header format, its strict validation, the
// per-device split by tensor name under TP and PP, the hub's range requests, and the budget.
// Files are written here (header + zero bytes), with the expected bytes computed by hand.
#include "sim/model/safetensors_header.hpp"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"
#include "tests/model/fake_hub_server.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;

namespace {

// hidden 256, 4 heads of 64, 2 KV heads, MLP 512, vocab 1000, 2 layers; untied.
const std::string kConfig = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
  "max_position_embeddings": 2048, "torch_dtype": "bfloat16", "tie_word_embeddings": false})";
const std::string kSha = "0123456789abcdef0123456789abcdef01234567";

using TensorRow = std::tuple<std::string, std::string, std::vector<std::int64_t>, std::int64_t>;

// Bytes (BF16 = 2 B, F32 = 4 B):
const std::vector<TensorRow> kTensors{
    {"model.embed_tokens.weight", "BF16", {1000, 256}, 512000},
    {"model.layers.0.self_attn.q_proj.weight", "BF16", {256, 256}, 131072},
    {"model.layers.0.self_attn.k_proj.weight", "BF16", {128, 256}, 65536},
    {"model.layers.0.self_attn.o_proj.weight", "BF16", {256, 256}, 131072},
    {"model.layers.0.mlp.down_proj.weight", "BF16", {256, 512}, 262144},
    {"model.layers.0.input_layernorm.weight", "BF16", {256}, 512},
    {"model.layers.1.self_attn.q_proj.weight", "BF16", {256, 256}, 131072},
    {"model.layers.1.self_attn.q_proj.weight_scale", "F32", {}, 4},  // not in the config
    {"model.layers.1.self_attn.o_proj.bias", "BF16", {256}, 512},
    {"model.norm.weight", "BF16", {256}, 512},
    {"lm_head.weight", "BF16", {1000, 256}, 512000},
};

std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A whole .safetensors file: length, header, then zero bytes for every tensor.
std::string safetensors_file(const std::vector<TensorRow>& rows) {
  nlohmann::ordered_json h;
  h["__metadata__"] = {{"format", "pt"}};
  std::int64_t at = 0;
  for (const auto& [name, dtype, shape, bytes] : rows) {
    h[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  const std::string json = h.dump();
  return le64(json.size()) + json + std::string(static_cast<std::size_t>(at), '\0');
}

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           fmt::format("vramsim-st-{}-{}-{}", tag, ::getpid(), ++counter);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void write(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

HubSettings offline(const std::filesystem::path& cache) {
  HubSettings s;
  s.cache_dir = cache;
  s.offline = true;
  return s;
}

}  // namespace

TEST_CASE("a safetensors header length is 8 little-endian bytes, 1 to 100,000,000",
          "[model][safetensors]") {
  CHECK(safetensors_header_length(le64(0x1234), "f") == 0x1234);
  CHECK_THAT(error_of([] { safetensors_header_length(le64(0), "a.safetensors"); }),
             Catch::Contains("a.safetensors") && Catch::Contains("bad safetensors header length 0"));
  CHECK_THAT(error_of([] { safetensors_header_length(le64(100'000'001), "f"); }),
             Catch::Contains("bad safetensors header length 100000001"));
  CHECK_THAT(error_of([] { safetensors_header_length("abc", "short.safetensors"); }),
             Catch::Contains("short.safetensors") && Catch::Contains("3 bytes"));
}

TEST_CASE("safetensors headers are validated strictly, naming the file and tensor",
          "[model][safetensors][errors]") {
  const auto t = parse_safetensors_header(
      R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "F8_E4M3", "shape": [4, 8],
          "data_offsets": [0, 32]}, "p": {"dtype": "F4", "shape": [3], "data_offsets": [32, 34]}})",
      "m.safetensors");
  REQUIRE(t.size() == 2);
  CHECK(t[0].num_bytes + t[1].num_bytes == 34);
  CHECK_THAT(error_of([] {
               parse_safetensors_header(
                   R"({"w": {"dtype": "BF17", "shape": [2], "data_offsets": [0, 4]}})", "x.st");
             }),
             Catch::Contains("x.st") && Catch::Contains("tensor 'w'") &&
                 Catch::Contains("unknown dtype 'BF17'"));
  CHECK_THAT(error_of([] {
               parse_safetensors_header(
                   R"({"w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 10]}})", "x");
             }),
             Catch::Contains("data_offsets span 10 bytes, but shape [2,3] of BF16 takes 12"));
  CHECK_THAT(error_of([] { parse_safetensors_header(R"({"w": {"dtype": "BF1)", "t.st"); }),
             Catch::Contains("t.st") && Catch::Contains("not a JSON object"));
  CHECK_THAT(error_of([] {
               parse_safetensors_header(R"({"w": {"dtype": "BF16", "shape": [-1],
                                          "data_offsets": [0, 2]}})", "x");
             }),
             Catch::Contains("shape entries must be non-negative integers"));
  // A file whose header announces more bytes than it has is truncated.
  TempDir dir("trunc");
  write(dir.path / "config.json", kConfig);
  write(dir.path / "model.safetensors", le64(500) + "{\"w\":");
  ResolvedModel m;
  m.config = dir.path / "config.json";
  m.folder = dir.path;
  m.hub = offline(dir.path);
  CHECK_THAT(error_of([&] { read_checkpoint_tensors(m); }),
             Catch::Contains("model.safetensors") && Catch::Contains("truncated"));
}

TEST_CASE("checkpoint bytes per device follow vLLM's split by tensor name",
          "[model][safetensors]") {
  TempDir dir("split");
  write(dir.path / "config.json", kConfig);
  write(dir.path / "model.safetensors", safetensors_file(kTensors));
  const ResolvedModel m =
      resolve_model(dir.path.string(), model::testing::zoo_dir(), {"main", offline(dir.path)});
  const ModelSpec spec = load_resolved(m);
  const std::optional<CheckpointTensors> ckpt = read_checkpoint_tensors(m);
  REQUIRE(ckpt);
  CHECK(ckpt->num_files == 1);
  CHECK(ckpt->tensors.size() == kTensors.size());
  // Every tensor once, the vocab of embed_tokens and lm_head padded to 1024 rows as vLLM
  // allocates it even at TP 1 (524288 B each): 524288 + 131072 + 65536 + 131072 + 262144 + 512
  // + 131072 + 4 + 512 + 512 + 524288.
  CHECK(checkpoint_bytes_on_stage(spec, *ckpt, {1, 1}, 0) == Bytes(1'771'012));
  // TP 2: embed_tokens / lm_head keep 512 of 1024 padded rows (262144 each); q, o, down
  // halve; k keeps 1 of 2 KV heads; norms, the scalar scale and the row-parallel bias stay.
  CHECK(checkpoint_bytes_on_stage(spec, *ckpt, {2, 1}, 0) ==
        Bytes(262144 + 65536 + 32768 + 65536 + 131072 + 512 + 65536 + 4 + 512 + 512 + 262144));
  // TP 4: 2 KV heads over 4 ranks, each holds one (replicated): k stays 32768.
  CHECK(checkpoint_bytes_on_stage(spec, *ckpt, {4, 1}, 0) ==
        Bytes(131072 + 32768 + 32768 + 32768 + 65536 + 512 + 32768 + 4 + 512 + 512 + 131072));
  // PP 2: layer 0 and the embeddings first; layer 1, the final norm and lm_head last.
  CHECK(checkpoint_bytes_on_stage(spec, *ckpt, {1, 2}, 0) ==
        Bytes(524288 + 131072 + 65536 + 131072 + 262144 + 512));
  CHECK(checkpoint_bytes_on_stage(spec, *ckpt, {1, 2}, 1) ==
        Bytes(131072 + 4 + 512 + 512 + 524288));
}

TEST_CASE("a sharded checkpoint is read through its index, header by header",
          "[model][safetensors]") {
  TempDir dir("shards");
  write(dir.path / "config.json", kConfig);
  const std::vector<TensorRow> a(kTensors.begin(), kTensors.begin() + 5);
  const std::vector<TensorRow> b(kTensors.begin() + 5, kTensors.end());
  write(dir.path / "model-00001-of-00002.safetensors", safetensors_file(a));
  write(dir.path / "model-00002-of-00002.safetensors", safetensors_file(b));
  nlohmann::json index;
  for (const auto& t : a) index["weight_map"][std::get<0>(t)] = "model-00001-of-00002.safetensors";
  for (const auto& t : b) index["weight_map"][std::get<0>(t)] = "model-00002-of-00002.safetensors";
  write(dir.path / "model.safetensors.index.json", index.dump());
  const ResolvedModel m =
      resolve_model(dir.path.string(), model::testing::zoo_dir(), {"main", offline(dir.path)});
  const std::optional<CheckpointTensors> ckpt = read_checkpoint_tensors(m);
  REQUIRE(ckpt);
  CHECK(ckpt->num_files == 2);
  CHECK(checkpoint_bytes_on_stage(load_resolved(m), *ckpt, {1, 1}, 0) == Bytes(1'771'012));
  // A folder with the config only has no checkpoint to read.
  TempDir bare("bare");
  write(bare.path / "config.json", kConfig);
  const ResolvedModel only =
      resolve_model(bare.path.string(), model::testing::zoo_dir(), {"main", offline(bare.path)});
  CHECK_FALSE(read_checkpoint_tensors(only).has_value());
}

TEST_CASE("from the hub only the header bytes of each shard are fetched",
          "[model][safetensors][hub][network-local]") {
  TempDir cache("hub");
  const std::vector<TensorRow> a(kTensors.begin(), kTensors.begin() + 5);
  const std::vector<TensorRow> b(kTensors.begin() + 5, kTensors.end());
  nlohmann::json index;
  for (const auto& t : a) index["weight_map"][std::get<0>(t)] = "s1.safetensors";
  for (const auto& t : b) index["weight_map"][std::get<0>(t)] = "s2.safetensors";
  vramsim::testing::FakeHubServer hub(
      {{"acme/Tiny", vramsim::testing::FakeRepo{kSha,
                                                {{"config.json", kConfig},
                                                 {"model.safetensors.index.json", index.dump()},
                                                 {"s1.safetensors", safetensors_file(a)},
                                                 {"s2.safetensors", safetensors_file(b)}},
                                                "",
                                                true}}});
  HubSettings s;
  s.cache_dir = cache.path;
  s.endpoint = hub.endpoint();
  const ResolvedModel m = resolve_model("acme/Tiny", model::testing::zoo_dir(), {"main", s});
  const std::optional<CheckpointTensors> ckpt = read_checkpoint_tensors(m);
  REQUIRE(ckpt);
  CHECK(ckpt->num_files == 2);
  CHECK(checkpoint_bytes_on_stage(load_resolved(m), *ckpt, {1, 1}, 0) == Bytes(1'771'012));
  int shard_requests = 0;
  for (const std::string& r : hub.requests()) {
    if (r.find(".safetensors ") == std::string::npos && r.find("/s1.") == std::string::npos &&
        r.find("/s2.") == std::string::npos) {
      continue;
    }
    ++shard_requests;
    CHECK_THAT(r, Catch::Contains(" range="));  // never a whole shard
  }
  CHECK(shard_requests == 4);  // length, then header, of each of the 2 shards
  // The shards were not stored in the cache (only whole files are).
  CHECK_FALSE(std::filesystem::exists(cache.path / "models--acme--Tiny" / "snapshots" / kSha /
                                      "s1.safetensors"));
}

TEST_CASE("the budget counts weights from the headers and says so", "[model][safetensors]") {
  TempDir dir("budget");
  write(dir.path / "exact" / "config.json", kConfig);
  write(dir.path / "exact" / "model.safetensors", safetensors_file(kTensors));
  write(dir.path / "derived" / "config.json", kConfig);
  run::BudgetRequest req;
  req.gpu_id = "h100-sxm";
  req.model_id = (dir.path / "exact").string();
  const run::BudgetAnswer exact = run::answer_budget(req, run::project_root());
  req.model_id = (dir.path / "derived").string();
  const run::BudgetAnswer derived = run::answer_budget(req, run::project_root());
  CHECK(exact.weights_source == "safetensors headers (1 file)");
  CHECK(derived.weights_source == "config.json");
  // Both add the same rotary cache to what they count.
  const Bytes from_config =
      weight_bytes_on_stage(derived.model, derived.engine.weights, Parallelism{1, 1}, 0);
  CHECK(exact.result.devices[0].weights - Bytes(1'771'012) ==
        derived.result.devices[0].weights - from_config);
  // --quantization fp8 re-quantizes at load: the headers no longer describe the device.
  req.model_id = (dir.path / "exact").string();
  req.quantization = "fp8";
  const run::BudgetAnswer fp8 = run::answer_budget(req, run::project_root());
  CHECK(fp8.weights_source == "config.json");
}
