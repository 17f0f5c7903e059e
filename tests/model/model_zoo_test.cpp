#include "sim/model/model_zoo.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/param_count.hpp"
#include "tests/catch.hpp"
#include "tests/model/model_test_util.hpp"

using namespace vramsim;
using namespace vramsim::model;
using vramsim::model::testing::shared_models_dir;
using vramsim::model::testing::zoo_dir;

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

TEST_CASE("the zoo holds at least 25 models, sorted, each loading under its own id",
          "[model][zoo]") {
  const std::vector<std::string> ids = zoo_model_ids(zoo_dir());
  CHECK(ids.size() >= 25);
  CHECK(std::is_sorted(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
    return lower(a) < lower(b);
  }));
  for (const std::string& id : ids) {
    INFO(id);
    const ModelSpec m = load_model(id, zoo_dir(), model::testing::offline_zoo_only());
    CHECK(m.name == id);  // _name_or_path matches the file name
  }
  CHECK(default_zoo_dir() == zoo_dir());
}

TEST_CASE("zoo files carry only a source note beyond the Hugging Face keys", "[model][zoo]") {
  for (const auto& entry : std::filesystem::directory_iterator(zoo_dir())) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().filename().string());
    std::ifstream in(entry.path());
    const nlohmann::json j = nlohmann::json::parse(in);
    REQUIRE(j.contains("_vramsim_source"));
    CHECK_THAT(j["_vramsim_source"].get<std::string>(), Catch::Contains("published count"));
  }
}

TEST_CASE("each zoo model counts the same as the full real config it was written from",
          "[model][zoo]") {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared_models_dir())) {
    if (entry.path().extension() != ".json") continue;
    const std::filesystem::path ours = zoo_dir() / entry.path().filename();
    if (!std::filesystem::exists(ours)) continue;
    INFO(entry.path().filename().string());
    const ModelSpec full = load_hf_config(entry.path());
    const ModelSpec trimmed = load_hf_config(ours);
    CHECK(count_params(full).total == count_params(trimmed).total);
    CHECK(count_params(full).active == count_params(trimmed).active);
    ++compared;
  }
  CHECK(compared >= 25);
}

TEST_CASE("zoo ids match case-insensitively", "[model][zoo]") {
  const ModelSpec m = load_model("meta-llama/llama-3.1-8b-instruct", zoo_dir(),
                                 model::testing::offline_zoo_only());
  CHECK(m.name == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(find_zoo_model("QWEN/qwen3-8b", zoo_dir()).has_value());
  CHECK_FALSE(find_zoo_model("Qwen/Qwen3-9B", zoo_dir()).has_value());
}

TEST_CASE("a path to a config.json, or to its folder, loads that file", "[model][zoo]") {
  const std::filesystem::path file = shared_models_dir() / "meta-llama__Llama-3.1-8B.json";
  CHECK(load_model(file.string(), zoo_dir()).num_layers == 32);
  const auto dir = std::filesystem::temp_directory_path() / "vramsim_zoo_test_model";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(file, dir / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const ModelSpec m = load_model(dir.string(), zoo_dir());
  CHECK(m.hidden_size == 4096);
  CHECK(m.name == "vramsim_zoo_test_model");  // no _name_or_path: the folder's name
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unknown id that is not a file lists the closest zoo ids", "[model][zoo][errors]") {
  try {
    load_model("meta-llama/Llama-3.1-9B", zoo_dir(), model::testing::offline_zoo_only());
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("model: 'meta-llama/Llama-3.1-9B' is neither"));
    CHECK_THAT(what, Catch::Contains("closest zoo ids: meta-llama/Llama-3.1-8B"));
    CHECK_THAT(what, Catch::Contains("HF_HUB_OFFLINE is set"));
  }
}
