// The JSON record and the results file of `compare serve`, written by the run layer alone
// (sim/run/compare_results): issue 6's fields for every option, the cost only when a price is
// given.
#include "sim/run/compare_results.hpp"

#include <string>
#include <vector>

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/serve_options.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace {

using namespace vramsim;

// Llama-3.1-8B on H100 SXM, 60 Azure-conversation-shaped requests, no SLOs: a scenario's text
// through the serving schema, as a TOML file would give it.
run::ServeConfig small_config() {
  return run::serve_config(run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 3\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[workload]\nsynthetic = \"azure-conv\"\nnum_requests = 60\n",
      "compare.toml")));
}

}  // namespace

TEST_CASE("compare serve's JSON lists every option with issue 6's and 15's fields and its cost",
          "[run][compare][serve][results]") {
  const run::CompareServeAnswer a =
      run::compare_serve({.base = small_config(), .num_gpus = 2, .price_per_gpu_hour = 3.0});
  const nlohmann::ordered_json j = run::compare_serve_json(a);
  CHECK(j["mode"] == "serve");
  CHECK(j["verdict"] == a.verdict);
  CHECK(j["default_slo"] == true);  // none given: the defaults
  CHECK(j["slo_ttft_s"] == 2.0);
  CHECK(j["slo_tpot_s"] == 0.1);
  CHECK_FALSE(j.contains("slo_e2e_s"));
  REQUIRE(j["options"].size() == a.options.size());
  for (std::size_t i = 0; i < a.options.size(); ++i) {
    const auto& o = j["options"][i];
    const run::ServeCandidate& c = a.options[i];
    CHECK(o["name"] == c.name);
    CHECK(o["num_gpus"] == c.num_gpus);
    CHECK(o["feasible"] == c.feasible);
    if (!c.feasible) {
      CHECK(o["reason"] == c.reason);
      continue;
    }
    for (const char* f :
         {"throughput_output_tokens_per_s", "throughput_requests_per_s", "goodput_requests_per_s",
          "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "kv_cache_tokens_per_replica",
          "max_concurrency_per_replica", "num_preemptions", "capacity_requests_per_s",
          "capacity_low_requests_per_s", "capacity_high_requests_per_s", "throughput_ratio",
          "goodput_ratio", "capacity_ratio", "scaling_efficiency", "slo_output_tokens_per_s",
          "bottleneck", "step_compute_s", "step_memory_s", "step_communication_s"}) {
      CHECK(o.contains(f));
    }
    CHECK_FALSE(o.contains("speedup"));  // replaced by the three named ratios
    CHECK(o["goodput_requests_per_s"].get<double>() == run::goodput_requests_per_s(c.answer));
    CHECK(o["capacity_requests_per_s"].get<double>() == c.capacity.max_rate_per_s);
    // The cost is per million output tokens of the requests within the SLOs, at the capacity.
    if (c.slo_output_tokens_per_s > 0.0) {
      CHECK(o["cost_per_million_slo_output_tokens_usd"].get<double>() ==
            Approx(3.0 * c.num_gpus / 3600.0 / c.slo_output_tokens_per_s * 1e6));
    } else {
      CHECK_FALSE(o.contains("cost_per_million_slo_output_tokens_usd"));
    }
  }
  CHECK(j["options"][0]["capacity_ratio"] == 1.0);
  CHECK(j["price_per_gpu_hour_usd"] == 3.0);
  CHECK(j["price_source"] == "--gpu-price-per-hour");

  const io::testing::ScratchDir dir("run-compare-serve");
  {
    io::ResultsWriter w(dir / "compare.h5");
    run::write_compare_serve(w, a, "vramsim compare serve");
  }
  const io::ResultsReader in(dir / "compare.h5");
  CHECK(in.read_string_attribute("/compare", "mode") == "serve");
  CHECK(in.read_string_attribute("/compare", "verdict") == a.verdict);
  CHECK(in.read_string_attribute("/", "calibration_source") == a.options[0].answer.cost_model);
  CHECK(in.read_string_column("/compare/options/name").size() == a.options.size());
  CHECK(in.read_double_column("/compare/options/capacity_ratio").front() == 1.0);
  CHECK(in.read_units("/compare/options/capacity_requests_per_s") == "1/s");
  CHECK(in.read_units("/compare/options/ttft_p99_s") == "s");
}

TEST_CASE("compare serve's results file carries the KV tier columns of its JSON, and they round "
          "trip",
          "[run][compare][serve][results][kv][offload]") {
  // The prefix-heavy workload of tests/run/compare_serve_kv_tier_test.cpp: Llama-3.1-8B on an
  // H100 whose GPU cache is cut to 300 blocks, a 4 GiB host tier, --compare-kv-tier.
  run::CompareServe q;
  q.base = run::serve_config(run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[engine]\nmax_model_len = 4096\nnum_gpu_blocks = 300\nkv_offloading_size = \"4GiB\"\n"
      "[workload]\nsynthetic = \"poisson\"\nrate = 50.0\nnum_requests = 200\n"
      "prompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\nprefix_groups = 8\n"
      "prefix_tokens = 1024\n",
      "c.toml")));
  q.num_gpus = 2;
  q.max_runs = 8;
  q.kv_tier_option = true;
  const run::CompareServeAnswer a = run::compare_serve(q);
  REQUIRE(run::any_kv_tier(a));
  const nlohmann::ordered_json j = run::compare_serve_json(a);
  const io::testing::ScratchDir dir("run-compare-serve-kv-tier");
  {
    io::ResultsWriter w(dir / "compare.h5");
    run::write_compare_serve(w, a, "vramsim compare serve --compare-kv-tier");
  }
  const io::ResultsReader in(dir / "compare.h5");
  const std::vector<std::string> names = in.read_string_column("/compare/options/name");
  const std::vector<std::int64_t> host =
      in.read_int_column("/compare/options/kv_offload_host_bytes_per_replica");
  const std::vector<std::int64_t> disk =
      in.read_int_column("/compare/options/kv_offload_disk_bytes_per_replica");
  REQUIRE(names.size() == a.options.size());
  REQUIRE(host.size() == a.options.size());
  REQUIRE(disk.size() == a.options.size());
  CHECK(in.read_units("/compare/options/kv_offload_host_bytes_per_replica") == "B");
  CHECK(in.read_units("/compare/options/kv_offload_disk_bytes_per_replica") == "B");
  bool seen_tier = false;
  for (const char* rate : {"gpu_prefix_hit_rate", "cpu_prefix_hit_rate", "disk_prefix_hit_rate"}) {
    const std::string path = std::string("/compare/options/") + rate;
    CHECK(in.read_units(path) == "1");
    const std::vector<double> got = in.read_double_column(path);
    REQUIRE(got.size() == a.options.size());
    for (std::size_t i = 0; i < a.options.size(); ++i) {
      INFO(names[i] << " " << rate);
      const auto& o = j["options"][i];
      // The file holds what the JSON says; an option that did not run has zeros.
      CHECK(got[i] == (a.options[i].feasible ? o[rate].get<double>() : 0.0));
    }
  }
  for (std::size_t i = 0; i < a.options.size(); ++i) {
    INFO(names[i]);
    CHECK(names[i] == a.options[i].name);
    if (!a.options[i].feasible) {
      CHECK(host[i] == 0);
      continue;
    }
    CHECK(host[i] == j["options"][i]["kv_offload_host_bytes_per_replica"].get<std::int64_t>());
    CHECK(disk[i] == 0);  // no disk tier
    if (names[i] == "1 GPU + KV tier") {
      seen_tier = true;
      // 4 GiB hold 2048 whole blocks of 2 MiB (16 tokens x 128 KiB of bf16 KV per token):
      // exactly 4 GiB per replica.
      CHECK(host[i] == GiB(4).count());
    } else {
      CHECK(host[i] == 0);  // --compare-kv-tier runs the GPU options without the tier
    }
  }
  CHECK(seen_tier);

  SECTION("a comparison without a tier has no tier columns") {
    const run::CompareServeAnswer none =
        run::compare_serve({.base = small_config(), .num_gpus = 2, .max_runs = 4});
    io::ResultsWriter w(dir / "none.h5");
    run::write_compare_serve(w, none, "vramsim compare serve");
    const io::ResultsReader r(dir / "none.h5");
    CHECK_FALSE(r.has_object("/compare/options/kv_offload_host_bytes_per_replica"));
    CHECK_FALSE(r.has_object("/compare/options/cpu_prefix_hit_rate"));
  }
}
