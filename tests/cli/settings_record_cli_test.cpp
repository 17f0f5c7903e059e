// Results files of `serve` and `budget` record the resolved settings of the serving option schema
// (sim/run/serve_options.hpp) with where each came from: a flag, the scenario's file:line, or
// the default and its source (analysis/SCHEMA.md, `inputs.settings`).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::io::ResultsReader;
using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

nlohmann::json settings_of(const std::filesystem::path& file) {
  const ResultsReader in(file);
  return nlohmann::json::parse(in.read_string_attribute("/", "inputs")).at("settings");
}

}  // namespace

TEST_CASE("serve --out records every setting with its origin", "[cli][results][options]") {
  const auto out = temp_dir() / "settings_serve.h5";
  std::filesystem::remove(out);
  const std::string scenario = (std::filesystem::path(root()) / "scenarios" / "default.toml").string();
  const Run r = run("serve " + scenario + " --num-requests 40 --max-num-seqs 64 --out " +
                    out.string());
  REQUIRE(r.exit_code == 0);
  const nlohmann::json s = settings_of(out);
  CHECK(s.at("engine.max_num_seqs").at("value") == 64);
  CHECK(s.at("engine.max_num_seqs").at("origin") == "flag");
  CHECK(s.at("engine.max_num_seqs").at("source") == "--max-num-seqs");
  CHECK(s.at("engine.tp").at("origin") == "scenario");
  CHECK(s.at("engine.tp").at("source") == scenario + ":22");
  CHECK(s.at("engine.long_prefill_token_threshold").at("origin") == "default");
  CHECK(s.at("engine.long_prefill_token_threshold").at("value") == 0);
  CHECK(s.at("workload.window_start").at("value").is_null());  // unset
}

TEST_CASE("budget --out records the engine settings only", "[cli][results][options]") {
  const auto out = temp_dir() / "settings_budget.h5";
  std::filesystem::remove(out);
  const Run r = run("budget --model meta-llama/Llama-3.1-8B-Instruct --gpu h100-sxm "
                    "--tensor-parallel-size 2 --out " + out.string());
  REQUIRE(r.exit_code == 0);
  const nlohmann::json s = settings_of(out);
  CHECK(s.at("engine.tp").at("value") == 2);
  CHECK(s.at("engine.tp").at("origin") == "flag");
  CHECK(s.at("hardware.gpu").at("value") == "h100-sxm");
  CHECK_FALSE(s.contains("workload.rate"));
  CHECK_FALSE(s.contains("serving.replicas"));
}
