// --vllm-version for the V0 releases (0.6.0 to 0.7.x; sim/run/vllm_version.hpp): the release
// table's engine and defaults, serve's vllm-v0 scheduler with V0's batch defaults, budget's
// refusal of V0's start-up accounting, and the releases that stay unmodelled.
#include <optional>
#include <string>

#include "sim/core/error.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_run.hpp"
#include "sim/run/vllm_version.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "tests/catch.hpp"
#include "tests/run/budget_notes.hpp"

namespace {

using namespace vramsim;
using run::VllmVersion;

run::ServeOptions llama_8b_serve(const std::string& extra) {
  return run::resolve_serve_options(run::load_serve_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[workload]\nsynthetic = \"poisson\"\nrate = 2.0\nnum_requests = 20\n"
      "prompt_tokens = \"fixed:512\"\noutput_tokens = \"fixed:64\"\n" + extra,
      "s.toml"));
}

std::string field_error(const run::ServeOptions& o, const std::string& field) {
  try {
    run::prepare_serve(o);
  } catch (const ConfigError& e) {
    for (const Problem& p : e.report().problems()) {
      if (p.field == field) return p.message;
    }
    return "other field: " + std::string(e.what());
  }
  return "";
}

using testing::has_note;

}  // namespace

TEST_CASE("the release table: V0 up to 0.7, V1 from 0.8.0, 0.8.x and pre-0.6 unmodelled",
          "[run][vllm_version][vllm_v0]") {
  CHECK_FALSE(run::vllm_behaviour({0, 6, 0}).v1_engine);
  CHECK_FALSE(run::vllm_behaviour({0, 7, 3}).v1_engine);
  CHECK(run::vllm_behaviour({0, 8, 0}).v1_engine);
  CHECK(run::vllm_behaviour({0, 19, 0}).v1_engine);
  CHECK_FALSE(run::vllm_behaviour({0, 6, 3}).prefix_caching_by_default);
  CHECK(run::vllm_behaviour({0, 9, 0}).prefix_caching_by_default);
  CHECK(run::unmodelled_release({0, 6, 0}).empty());
  CHECK(run::unmodelled_release({0, 7, 3}).empty());
  CHECK(run::unmodelled_release({0, 9, 0}).empty());
  CHECK(run::unmodelled_release({0, 5, 4}).find("before 0.6.0") != std::string::npos);
  CHECK(run::unmodelled_release({0, 8, 5}).find("0.8.x") != std::string::npos);
  CHECK(run::engine_description("0.6.3") == "vLLM 0.6.3, V0 engine");
  CHECK(run::engine_description("0.19.0") == "vLLM 0.19.0, V1 engine");
}

TEST_CASE("V0's batch defaults follow max_model_len, chunked prefill and the release",
          "[run][vllm_version][vllm_v0]") {
  const std::optional<bool> unset;
  // Up to 32K: chunked prefill off, a step holds max(max_model_len, 2048) tokens.
  run::VllmV0Defaults d = run::vllm_v0_defaults({0, 6, 3}, 8192, unset, false, false);
  CHECK_FALSE(d.enable_chunked_prefill);
  CHECK(d.max_num_batched_tokens == 8192);
  CHECK(d.max_num_seqs == 256);
  CHECK(run::vllm_v0_defaults({0, 6, 3}, 1024, unset, false, false).max_num_batched_tokens ==
        2048);
  CHECK_FALSE(run::vllm_v0_defaults({0, 6, 3}, 32768, unset, false, false).enable_chunked_prefill);
  // Over 32K: on, with 512 tokens up to 0.6.4 and 2048 from 0.6.5 (vllm-project/vllm #10544).
  d = run::vllm_v0_defaults({0, 6, 4}, 131072, unset, false, false);
  CHECK(d.enable_chunked_prefill);
  CHECK(d.max_num_batched_tokens == 512);
  CHECK(run::vllm_v0_defaults({0, 6, 5}, 131072, unset, false, false).max_num_batched_tokens ==
        2048);
  CHECK(run::vllm_v0_defaults({0, 7, 3}, 131072, unset, false, false).max_num_batched_tokens ==
        2048);
  // LoRA or speculative decoding keep it off; a user's setting wins.
  d = run::vllm_v0_defaults({0, 6, 3}, 131072, unset, true, false);
  CHECK_FALSE(d.enable_chunked_prefill);
  CHECK(d.max_num_batched_tokens == 131072);
  CHECK_FALSE(run::vllm_v0_defaults({0, 6, 3}, 131072, unset, false, true).enable_chunked_prefill);
  d = run::vllm_v0_defaults({0, 6, 3}, 8192, true, false, false);
  CHECK(d.enable_chunked_prefill);
  CHECK(d.max_num_batched_tokens == 512);
}

TEST_CASE("serve under a V0 release runs vllm-v0 with V0's defaults and 0.9.0's KV cache",
          "[run][vllm_version][vllm_v0]") {
  run::ServeAnswer a = run::prepare_serve(
      llama_8b_serve("[engine]\nmax_model_len = 8192\nvllm_version = \"0.6.3\"\n"));
  const serving::ServingSetup& s = a.config.setup;
  CHECK(s.scheduler == "vllm-v0");
  CHECK_FALSE(s.replica.kv.enable_prefix_caching);
  CHECK_FALSE(s.replica.limits.enable_chunked_prefill);
  CHECK(s.replica.limits.max_num_batched_tokens == 8192);
  CHECK(s.replica.limits.max_num_seqs == 256);
  CHECK_FALSE(s.replica.async_scheduling);
  CHECK(s.replica.limits.watermark_blocks ==
        serving::vllm_v0_watermark_blocks(s.replica.kv.num_blocks));
  CHECK(s.replica.limits.watermark_blocks > 0);
  CHECK(has_note(a.budget, "V0 engine"));
  CHECK(has_note(a.budget, "sized with 0.9.0's rules"));
  // The KV cache is 0.9.0's at the same batch limits.
  const run::ServeAnswer v09 = run::prepare_serve(llama_8b_serve(
      "[engine]\nmax_model_len = 8192\nvllm_version = \"0.9.0\"\nmax_num_seqs = 256\n"
      "max_num_batched_tokens = 8192\n"));
  CHECK(a.budget.result.num_gpu_blocks == v09.budget.result.num_gpu_blocks);
  run::simulate_serve(a, nullptr);
  CHECK(a.result.metrics.num_finished == 20);

  SECTION("long contexts get V0's chunked prefill with its 2048-token default") {
    const run::ServeAnswer l = run::prepare_serve(
        llama_8b_serve("[engine]\nmax_model_len = 65536\nvllm_version = \"0.7.3\"\n"));
    CHECK(l.config.setup.replica.limits.enable_chunked_prefill);
    CHECK(l.config.setup.replica.limits.max_num_batched_tokens == 2048);
  }
  SECTION("settings the user gives are kept") {
    const run::ServeAnswer g = run::prepare_serve(llama_8b_serve(
        "[engine]\nmax_model_len = 8192\nvllm_version = \"0.6.3\"\n[serving]\n"
        "scheduler = \"vllm\"\nenable_prefix_caching = true\nenable_chunked_prefill = true\n"));
    CHECK(g.config.setup.scheduler == "vllm");
    CHECK(g.config.setup.replica.kv.enable_prefix_caching);
    CHECK(g.config.setup.replica.limits.enable_chunked_prefill);
    CHECK(g.config.setup.replica.limits.max_num_batched_tokens == 512);
    CHECK(g.config.setup.replica.limits.watermark_blocks == 0);
  }
}

TEST_CASE("a V1 release keeps its scheduler and defaults", "[run][vllm_version][vllm_v0]") {
  const run::ServeAnswer a = run::prepare_serve(
      llama_8b_serve("[engine]\nmax_model_len = 8192\nvllm_version = \"0.9.0\"\n"));
  CHECK(a.config.setup.scheduler == "vllm");
  CHECK(a.config.setup.replica.kv.enable_prefix_caching);
  CHECK(a.config.setup.replica.limits.enable_chunked_prefill);
  CHECK(a.config.setup.replica.limits.watermark_blocks == 0);
}

TEST_CASE("budget refuses a V0 release, and serve refuses what it does not model",
          "[run][vllm_version][vllm_v0]") {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.vllm_version = "0.6.3";
  req.suggest = false;
  std::string message;
  try {
    run::answer_budget(req, run::project_root());
  } catch (const ConfigError& e) {
    message = e.report().problems().front().message;
  }
  CHECK(message.find("runs the V0 engine") != std::string::npos);
  CHECK(message.find("0.9.0") != std::string::npos);

  CHECK(field_error(llama_8b_serve("[engine]\nvllm_version = \"0.5.4\"\n"),
                    "engine.vllm_version")
            .find("before 0.6.0") != std::string::npos);
  CHECK(field_error(llama_8b_serve("[engine]\nvllm_version = \"0.8.4\"\n"),
                    "engine.vllm_version")
            .find("0.8.x") != std::string::npos);
  CHECK(field_error(llama_8b_serve("[engine]\nvllm_version = \"0.6.3\"\npp = 2\n"), "engine.pp")
            .find("virtual engines") != std::string::npos);
}
