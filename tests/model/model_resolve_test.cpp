// Resolving a model argument as vLLM and transformers do: local path, hub cache, zoo, hub. The
// hub is a FakeHubServer on 127.0.0.1 and every cache a temporary folder, so nothing here needs
// the internet or the user's own cache (each test passes explicit HubSettings).
#include "sim/model/model_zoo.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/model/hf_cache.hpp"
#include "sim/model/hub_client.hpp"
#include "tests/catch.hpp"
#include "tests/model/fake_hub_server.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::zoo_dir;
using vramsim::testing::FakeHubServer;
using vramsim::testing::FakeRepo;

namespace {

// A small Llama without _name_or_path, so the name must come from the id.
const std::string kConfig = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
  "max_position_embeddings": 2048, "torch_dtype": "bfloat16"})";
const std::string kSha = "0123456789abcdef0123456789abcdef01234567";
const std::string kSha2 = "fedcba9876543210fedcba9876543210fedcba98";

/// A fresh empty folder under the system's temporary directory, removed with the object.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           fmt::format("vramsim-{}-{}-{}", tag, ::getpid(), ++counter);
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

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

HubSettings offline_settings(const std::filesystem::path& cache) {
  HubSettings s;
  s.cache_dir = cache;
  s.offline = true;
  return s;
}

HubSettings online_settings(const std::filesystem::path& cache, const FakeHubServer& hub) {
  HubSettings s;
  s.cache_dir = cache;
  s.endpoint = hub.endpoint();
  s.connect_timeout = std::chrono::seconds(2);
  s.transfer_timeout = std::chrono::seconds(5);
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("hub settings follow huggingface_hub's environment variables", "[model][hub]") {
  std::map<std::string, std::string> env{{"HOME", "/home/u"}};
  auto getenv = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  HubSettings s = hub_settings_from(getenv);
  CHECK(s.cache_dir == "/home/u/.cache/huggingface/hub");
  CHECK(s.endpoint == "https://huggingface.co");
  CHECK(s.token.empty());
  CHECK_FALSE(s.offline);
  env["HF_HOME"] = "/data/hf";
  CHECK(hub_settings_from(getenv).cache_dir == "/data/hf/hub");
  env["HF_HUB_CACHE"] = "/fast/cache";
  env["HF_ENDPOINT"] = "https://mirror.example/";
  env["HF_TOKEN"] = "hf_abc";
  env["HF_HUB_OFFLINE"] = "1";
  s = hub_settings_from(getenv);
  CHECK(s.cache_dir == "/fast/cache");
  CHECK(s.endpoint == "https://mirror.example");
  CHECK(s.token == "hf_abc");
  CHECK(s.offline);
  env["HF_HUB_OFFLINE"] = "0";
  CHECK_FALSE(hub_settings_from(getenv).offline);
  env["HF_HUB_OFFLINE"] = "True";
  CHECK(hub_settings_from(getenv).offline);
}

TEST_CASE("repository ids map to the cache's folder names", "[model][hub]") {
  CHECK(repo_folder_name("meta-llama/Llama-3.1-8B") == "models--meta-llama--Llama-3.1-8B");
  CHECK(repo_folder_name("gpt2") == "models--gpt2");
  CHECK(is_hub_repo_id("Qwen/Qwen3-8B"));
  CHECK(is_hub_repo_id("gpt2"));
  CHECK_FALSE(is_hub_repo_id("a/b/c"));
  CHECK_FALSE(is_hub_repo_id("../etc"));
  CHECK_FALSE(is_hub_repo_id("/abs/path"));
  CHECK(is_commit_sha(kSha));
  CHECK_FALSE(is_commit_sha("main"));
  CHECK_FALSE(is_commit_sha(kSha.substr(1)));
}

TEST_CASE("a folder holding a config.json resolves as a local path before anything else",
          "[model][hub]") {
  TempDir dir("local");
  write(dir.path / "my-model" / "config.json", kConfig);
  const ResolvedModel m = resolve_model((dir.path / "my-model").string(), zoo_dir(),
                                        {"main", offline_settings(dir.path)});
  CHECK(m.source == ModelSource::kLocalPath);
  CHECK(m.config == dir.path / "my-model" / "config.json");
  CHECK(load_resolved(m).name == "my-model");
}

TEST_CASE("a cached snapshot is found through refs/<revision>, or by its commit directly",
          "[model][hub]") {
  TempDir cache("cache");
  const std::filesystem::path repo = cache.path / "models--acme--Tiny-Llama";
  write(repo / "refs" / "main", kSha + "\n");
  write(repo / "snapshots" / kSha / "config.json", kConfig);
  write(repo / "snapshots" / kSha2 / "config.json", kConfig);

  const ResolvedModel m = resolve_model("acme/Tiny-Llama", zoo_dir(),
                                        {"main", offline_settings(cache.path)});
  CHECK(m.source == ModelSource::kHubCache);
  CHECK(m.folder == repo / "snapshots" / kSha);
  // Never the snapshot's sha: the id names the model when the config has no _name_or_path.
  CHECK(load_resolved(m).name == "acme/Tiny-Llama");

  const ResolvedModel pinned =
      resolve_model("acme/Tiny-Llama", zoo_dir(), {kSha2, offline_settings(cache.path)});
  CHECK(pinned.folder == repo / "snapshots" / kSha2);

  const std::string what = error_of([&] {
    resolve_model("acme/Tiny-Llama", zoo_dir(), {"v2.0", offline_settings(cache.path)});
  });
  CHECK_THAT(what, Catch::Contains("no snapshot of revision 'v2.0'"));
  CHECK_THAT(what, Catch::Contains(repo.string()));
}

TEST_CASE("the cache comes before the zoo for a zoo id", "[model][hub]") {
  TempDir cache("cache-zoo");
  const std::filesystem::path repo = cache.path / "models--meta-llama--Llama-3.1-8B";
  write(repo / "refs" / "main", kSha);
  write(repo / "snapshots" / kSha / "config.json", kConfig);
  const ResolvedModel m =
      resolve_model("meta-llama/Llama-3.1-8B", zoo_dir(), {"main", offline_settings(cache.path)});
  CHECK(m.source == ModelSource::kHubCache);
  CHECK(load_resolved(m).hidden_size == 256);
  TempDir empty("cache-empty");
  const ResolvedModel zoo = resolve_model("meta-llama/Llama-3.1-8B", zoo_dir(),
                                          {"main", offline_settings(empty.path)});
  CHECK(zoo.source == ModelSource::kZoo);
  CHECK(load_resolved(zoo).hidden_size == 4096);
}

TEST_CASE("offline, an unknown id says where it looked", "[model][hub][errors]") {
  TempDir cache("offline");
  const std::string what = error_of([&] {
    resolve_model("acme/Nowhere-7B", zoo_dir(), {"main", offline_settings(cache.path)});
  });
  CHECK_THAT(what, Catch::Contains("closest zoo ids"));
  CHECK_THAT(what, Catch::Contains("the path acme/Nowhere-7B"));
  CHECK_THAT(what, Catch::Contains((cache.path / "models--acme--Nowhere-7B").string()));
  CHECK_THAT(what, Catch::Contains("the zoo " + zoo_dir().string()));
  CHECK_THAT(what, Catch::Contains("HF_HUB_OFFLINE is set"));
}

TEST_CASE("a hub download lands in the cache layout and is found there offline",
          "[model][hub][network-local]") {
  TempDir cache("download");
  {
    FakeHubServer hub({{"acme/Tiny-Llama", FakeRepo{kSha, {{"config.json", kConfig}}, "", true}}});
    const ResolvedModel m =
        resolve_model("acme/Tiny-Llama", zoo_dir(), {"main", online_settings(cache.path, hub)});
    CHECK(m.source == ModelSource::kHub);
    CHECK(load_resolved(m).name == "acme/Tiny-Llama");
    const std::vector<std::string> asked = hub.requests();
    REQUIRE(asked.size() == 3);  // config.json and the two quantization side files
    CHECK(asked[0] == "/acme/Tiny-Llama/resolve/main/config.json");
  }
  const std::filesystem::path repo = cache.path / "models--acme--Tiny-Llama";
  CHECK(read(repo / "refs" / "main") == kSha);
  const std::filesystem::path snap = repo / "snapshots" / kSha / "config.json";
  REQUIRE(std::filesystem::is_symlink(snap));
  CHECK(std::filesystem::read_symlink(snap).string().rfind("../../blobs/", 0) == 0);
  CHECK(read(snap) == kConfig);
  CHECK_FALSE(std::filesystem::exists(repo / "snapshots" / kSha / "hf_quant_config.json"));
  // The server is gone: the cache answers.
  const ResolvedModel again =
      resolve_model("acme/Tiny-Llama", zoo_dir(), {"main", offline_settings(cache.path)});
  CHECK(again.source == ModelSource::kHubCache);
}

TEST_CASE("a ModelOpt checkpoint's hf_quant_config.json comes from the hub with its config.json",
          "[model][hub][network-local][quant]") {
  TempDir cache("side_file");
  // ModelOpt <= 0.29 puts the quantization beside config.json, not in it (vLLM's modelopt.py
  // get_config_filenames); the same bytes as tests/model/data/quant_modelopt_fp8.
  const std::string quant = R"({"producer": {"name": "modelopt", "version": "0.19.0"},
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                     "exclude_modules": ["lm_head"]}})";
  FakeHubServer hub({{"acme/Tiny-Llama-FP8",
                      FakeRepo{kSha, {{"config.json", kConfig}, {"hf_quant_config.json", quant}},
                               "", true}}});
  const ResolvedModel m = resolve_model("acme/Tiny-Llama-FP8", zoo_dir(),
                                        {"main", online_settings(cache.path, hub)});
  const std::filesystem::path snap =
      cache.path / "models--acme--Tiny-Llama-FP8" / "snapshots" / kSha;
  CHECK(read(snap / "hf_quant_config.json") == quant);
  const ModelSpec spec = load_resolved(m);
  REQUIRE(spec.checkpoint_quant);
  CHECK(spec.checkpoint_quantization == "modelopt");
  CHECK(spec.checkpoint_quant->method == QuantMethod::kModelOpt);
  CHECK(spec.checkpoint_quant->config_file.find("hf_quant_config.json") != std::string::npos);
}

TEST_CASE("without X-Repo-Commit the commit is asked of the hub's API",
          "[model][hub][network-local]") {
  TempDir cache("api");
  FakeHubServer hub({{"acme/Tiny", FakeRepo{kSha, {{"config.json", kConfig}}, "", false}}});
  HubClient client(online_settings(cache.path, hub));
  const auto path = client.download("acme/Tiny", "main", "config.json");
  REQUIRE(path);
  CHECK(*path == cache.path / "models--acme--Tiny" / "snapshots" / kSha / "config.json");
  CHECK(hub.requests().back() == "/api/models/acme/Tiny/revision/main");
  CHECK_FALSE(client.download("acme/Tiny", "main", "model.safetensors").has_value());
}

TEST_CASE("a gated model asks for HF_TOKEN and loads with it", "[model][hub][network-local]") {
  TempDir cache("gated");
  FakeHubServer hub(
      {{"acme/Gated-8B", FakeRepo{kSha, {{"config.json", kConfig}}, "hf_secret", true}}});
  HubSettings s = online_settings(cache.path, hub);
  const std::string what =
      error_of([&] { resolve_model("acme/Gated-8B", zoo_dir(), {"main", s}); });
  CHECK_THAT(what, Catch::Contains("gated or private"));
  CHECK_THAT(what, Catch::Contains("HTTP 401"));
  CHECK_THAT(what, Catch::Contains("set HF_TOKEN"));
  s.token = "hf_wrong";
  CHECK_THAT(error_of([&] { resolve_model("acme/Gated-8B", zoo_dir(), {"main", s}); }),
             Catch::Contains("the HF_TOKEN given was refused"));
  s.token = "hf_secret";
  CHECK(resolve_model("acme/Gated-8B", zoo_dir(), {"main", s}).source == ModelSource::kHub);
}

TEST_CASE("an id the hub does not know is reported as not found", "[model][hub][network-local]") {
  TempDir cache("missing");
  FakeHubServer hub({{"acme/Tiny", FakeRepo{kSha, {{"config.json", kConfig}}, "", true}}});
  const HubSettings s = online_settings(cache.path, hub);
  const std::string what =
      error_of([&] { resolve_model("acme/Nope", zoo_dir(), {"main", s}); });
  CHECK_THAT(what, Catch::Contains("'acme/Nope' was not found"));
  CHECK_THAT(what, Catch::Contains("RepoNotFound"));
  CHECK_THAT(error_of([&] { resolve_model("acme/Tiny", zoo_dir(), {"v9", s}); }),
             Catch::Contains("RevisionNotFound"));
}

TEST_CASE("a range request returns only the bytes asked for", "[model][hub][network-local]") {
  TempDir cache("range");
  FakeHubServer hub({{"acme/Tiny", FakeRepo{kSha, {{"blob.bin", "0123456789"}}, "", true}}});
  HubClient client(online_settings(cache.path, hub));
  CHECK(client.fetch_range("acme/Tiny", "main", "blob.bin", {2, 5}) == "2345");
  CHECK(hub.requests().back() == "/acme/Tiny/resolve/main/blob.bin range=2-5");
  CHECK(client.fetch_range("acme/Tiny", "main", "blob.bin", {8, 20}) == "89");
  CHECK_FALSE(client.fetch_range("acme/Tiny", "main", "other.bin", {0, 7}).has_value());
}

TEST_CASE("an unreachable hub fails fast with what to do", "[model][hub][network-local]") {
  TempDir cache("down");
  HubSettings s;
  {
    FakeHubServer hub({});
    s = online_settings(cache.path, hub);
  }  // closed: connections are refused
  const std::string what =
      error_of([&] { resolve_model("acme/Tiny", zoo_dir(), {"main", s}); });
  CHECK_THAT(what, Catch::Contains("cannot fetch"));
  CHECK_THAT(what, Catch::Contains("HF_HUB_OFFLINE=1"));
  s.offline = true;
  CHECK_THROWS_AS(HubClient(s), ConfigError);
}
