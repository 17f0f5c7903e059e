// `vramsim compare serve` and the KV offload tier (sim/run/compare_serve_run): a tier in the
// base runs in every option and each shows it; --compare-kv-tier (CompareServe::kv_tier_option)
// runs the GPU options without it and adds "1 GPU + KV tier", so that "does a host KV tier beat
// a second GPU?" is one comparison; without a tier in the base it is refused, naming itself.
#include "sim/run/compare_serve_run.hpp"

#include <string>

#include "sim/core/error.hpp"
#include "sim/run/compare_results.hpp"
#include "sim/run/serve_options.hpp"
#include "tests/catch.hpp"
#include "tests/run/compare_serve_fixture.hpp"

namespace run = vramsim::run;
using vramsim::ConfigError;
using vramsim::GiB;
using vramsim::testing::option;

namespace {

// The prefix-heavy workload of tests/run/plan_serve_kv_tier_test.cpp: Llama-3.1-8B on an H100
// whose GPU cache is cut to 300 blocks, 200 requests in 8 groups sharing 1024-token prefixes.
run::ServeConfig config(const std::string& engine) {
  return run::serve_config(run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[engine]\nmax_model_len = 4096\nnum_gpu_blocks = 300\n" +
          engine +
          "[workload]\nsynthetic = \"poisson\"\nrate = 50.0\nnum_requests = 200\n"
          "prompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\nprefix_groups = 8\n"
          "prefix_tokens = 1024\n",
      "c.toml")));
}

run::CompareServeAnswer compare(const std::string& engine, bool tier_option) {
  run::CompareServe q;
  q.base = config(engine);
  q.num_gpus = 2;
  q.price_per_gpu_hour = 3.0;
  q.max_runs = 8;
  q.kv_tier_option = tier_option;
  return run::compare_serve(q);
}

}  // namespace

TEST_CASE("compare serve --compare-kv-tier runs the GPU options without the tier and one GPU "
          "with it, whose prefix misses become CPU hits",
          "[run][compare][serve][kv][offload]") {
  const run::CompareServeAnswer a = compare("kv_offloading_size = \"4GiB\"\n", true);
  const run::ServeCandidate& base = option(a, "1 GPU");
  const run::ServeCandidate& tier = option(a, "1 GPU + KV tier");
  REQUIRE(base.feasible);
  REQUIRE(tier.feasible);
  CHECK(tier.kv_tier_option);
  CHECK(tier.num_gpus == 1);
  for (const run::ServeCandidate& o : a.options) {
    INFO(o.name);
    if (!o.feasible) continue;
    // 4 GiB hold 2048 blocks of 2 MiB; only the tier option has them.
    CHECK(o.answer.budget.kv_offload.num_blocks == (o.kv_tier_option ? 2048 : 0));
    CHECK(run::kv_tier_text(o) ==
          (o.kv_tier_option ? "4.00 GiB host (2048 blocks) per replica" : "none"));
  }
  CHECK(base.answer.result.offload_prefix_hit_rate() == 0.0);
  CHECK(tier.answer.result.offload_prefix_hit_rate() > 0.0);
  CHECK(tier.answer.result.prefix_hit_rate() > base.answer.result.prefix_hit_rate());
  // Loading prefixes instead of recomputing them: a higher capacity than one GPU without it.
  CHECK(tier.capacity.max_rate_per_s > base.capacity.max_rate_per_s);
  CHECK(tier.capacity_ratio > 1.0);
  REQUIRE(a.best >= 0);
  if (a.options[static_cast<std::size_t>(a.best)].kv_tier_option) {
    CHECK(a.verdict.rfind("a KV offload tier on one ", 0) == 0);
  }
  const nlohmann::ordered_json j = run::compare_serve_json(a);
  bool seen = false;
  for (const auto& o : j["options"]) {
    if (o["name"] != "1 GPU + KV tier") continue;
    seen = true;
    CHECK(o["kv_offload_host_bytes_per_replica"] == GiB(4).count());
    CHECK(o["cpu_prefix_hit_rate"].get<double>() > 0.0);
  }
  CHECK(seen);
  SECTION("the same comparison twice gives the same answer") {
    const run::CompareServeAnswer b = compare("kv_offloading_size = \"4GiB\"\n", true);
    CHECK(run::compare_serve_json(b).dump() == j.dump());
  }
}

TEST_CASE("compare serve with a tier in the base runs it in every option and shows it, and "
          "without a tier the output has no tier fields",
          "[run][compare][serve][kv][offload]") {
  const run::CompareServeAnswer a = compare("kv_offloading_size = \"4GiB\"\n", false);
  CHECK(run::any_kv_tier(a));
  for (const run::ServeCandidate& o : a.options) {
    INFO(o.name);
    CHECK_FALSE(o.kv_tier_option);
    if (o.feasible && o.name != "1P1D") CHECK(o.answer.budget.kv_offload.num_blocks == 2048);
  }
  const run::CompareServeAnswer none = compare("", false);
  CHECK_FALSE(run::any_kv_tier(none));
  CHECK_FALSE(run::compare_serve_json(none)["options"][0].contains("cpu_prefix_hit_rate"));
}

TEST_CASE("compare serve --compare-kv-tier without a tier in the base is refused, naming it",
          "[run][compare][serve][kv][offload]") {
  try {
    (void)compare("", true);
    FAIL("not refused");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems().front().field == "compare.kv_tier");
    CHECK(e.report().problems().front().message.find("--kv-offloading-size") !=
          std::string::npos);
  }
}
