// engine.async_scheduling (--async-scheduling / --no-async-scheduling) through the serving
// schema: its default follows --vllm-version as vLLM's does (on from 0.14.0, off with the
// settings vLLM turns it off for), and the combinations vLLM refuses are refused at the field.
#include "sim/core/error.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/vllm_version.hpp"
#include "tests/catch.hpp"

#include <string>

namespace {

using namespace vramsim;

constexpr const char* kHead =
    "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
    "[engine]\nmax_model_len = 4096\n";

bool async_on(const std::string& engine) {
  return run::serve_config(run::resolve_serve_options(
                               run::load_serve_scenario_text(std::string(kHead) + engine,
                                                             "async.toml")))
      .setup.replica.async_scheduling;
}

// The one problem a refused scenario reports: its field and message.
std::pair<std::string, std::string> refusal(const std::string& engine) {
  try {
    async_on(engine);
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const Problem& p = e.report().problems()[0];
    return {p.field, p.message};
  }
  FAIL("expected a ConfigError");
  return {};
}

}  // namespace

TEST_CASE("async scheduling is on by default from vLLM 0.14 and off before",
          "[run][serve][async]") {
  CHECK(run::vllm_behaviour({0, 13, 0}).async_scheduling == false);
  CHECK(run::vllm_behaviour({0, 14, 0}).async_scheduling == true);
  CHECK(async_on(""));  // the default release, 0.19.0
  CHECK(async_on("vllm_version = \"0.14.0\"\n"));
  CHECK_FALSE(async_on("vllm_version = \"0.13.0\"\n"));
  // As given, whatever the release's default.
  CHECK(async_on("vllm_version = \"0.13.0\"\nasync_scheduling = true\n"));
  CHECK_FALSE(async_on("async_scheduling = false\n"));
}

TEST_CASE("async scheduling stays off by default where vLLM turns it off",
          "[run][serve][async]") {
  // Pipeline parallelism: off before 0.16.0, on from it (vLLM PRs #32359 and #32618).
  CHECK(run::vllm_behaviour({0, 15, 1}).async_scheduling_with_pp == false);
  CHECK(run::vllm_behaviour({0, 16, 0}).async_scheduling_with_pp == true);
  CHECK_FALSE(async_on("pp = 2\nvllm_version = \"0.15.1\"\n"));
  CHECK(async_on("pp = 2\nvllm_version = \"0.16.0\"\n"));
  CHECK(async_on("pp = 2\n"));  // the default release, 0.19.0
  CHECK_FALSE(async_on("speculative_config = '{\"method\": \"ngram\", "
                       "\"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'\n"
                       "spec_acceptance_rate = \"0.5\"\n"));
}

TEST_CASE("async scheduling asked for with pipeline parallelism before vLLM 0.16 or an ngram "
          "draft is refused at engine.async_scheduling",
          "[run][serve][async]") {
  auto [field, message] =
      refusal("pp = 2\nasync_scheduling = true\nvllm_version = \"0.15.1\"\n");
  CHECK(field == "engine.async_scheduling");
  CHECK(message.find("pipeline parallelism") != std::string::npos);
  CHECK(message.find("0.15.1") != std::string::npos);
  CHECK(async_on("pp = 2\nasync_scheduling = true\n"));  // 0.19.0 runs the two together
  std::tie(field, message) =
      refusal("async_scheduling = true\nspeculative_config = '{\"method\": \"ngram\", "
              "\"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'\n"
              "spec_acceptance_rate = \"0.5\"\n");
  CHECK(field == "engine.async_scheduling");
  CHECK(message.find("'ngram'") != std::string::npos);
}
