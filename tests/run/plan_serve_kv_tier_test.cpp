// `vramsim plan serve --search-kv-offloading-size` (sim/run/plan_serve_run): the KV offload tier
// as a searched axis. A prefix-heavy workload on a GPU cache too small for its prefixes, where
// the host tier turns GPU misses into CPU hits: each tier row is what serve says for it, the
// plan ranks one GPU with the tier above two GPUs without it, --max-host-memory skips the rows
// whose tiers need more, bad values are refused naming their list, and the answer does not
// depend on the threads.
#include "sim/run/plan_serve_run.hpp"

#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;
using vramsim::Bytes;
using vramsim::ConfigError;
using vramsim::Duration;
using vramsim::GiB;
using vramsim::MiB;

namespace {

// Llama-3.1-8B on an H100 with the GPU cache cut to 300 blocks of 16 tokens (4800 tokens):
// 200 requests of 1100 prompt tokens at 50 requests/s, in 8 groups sharing a 1024-token
// prefix (64 blocks each, 512 blocks in all), so the prefixes do not all stay on the GPU
// (tests/serving/kv_offload_settings_test.cpp). One 16-token block of bf16 KV is 2 MiB.
const std::string kEngine =
    "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
    "[engine]\nmax_model_len = 4096\nnum_gpu_blocks = 300\n";
const std::string kWorkload =
    "[workload]\nsynthetic = \"poisson\"\nrate = 50.0\nnum_requests = 200\n"
    "prompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\nprefix_groups = 8\n"
    "prefix_tokens = 1024\n";

// The scenario with `engine` lines in [engine] and `tail` (whole sections) after the workload.
run::ServeOptions options(const std::string& engine = "", const std::string& tail = "") {
  return run::resolve_serve_options(
      run::load_serve_scenario_text(kEngine + engine + kWorkload + tail, "t.toml"));
}

// TP 1, one or two replicas, no tier or a 4 GiB host tier: 4 rows, the tier fastest.
run::PlanServeRequest request(const std::string& engine = "", const std::string& tail = "") {
  run::PlanServeRequest q;
  q.options = options(engine, tail);
  q.tps = {1};
  q.replicas = {1, 2};
  q.kv_offloading_sizes = {"0", "4GiB"};
  q.capacity = false;
  q.early_stop = false;
  q.jobs = 2;
  return q;
}

// serve's p99 TTFT for one replica with the given tier.
Duration serve_ttft_p99(const std::string& tier) {
  run::ServeAnswer a = run::prepare_serve(options(tier));
  run::simulate_serve(a, nullptr);
  return a.result.metrics.ttft.quantile(0.99);
}

// The field and message of the one problem of plan_serve_space(q).
std::string problem_of(const run::PlanServeRequest& q) {
  try {
    (void)run::plan_serve_space(q);
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const vramsim::Problem& p = e.report().problems().front();
    return p.field + ": " + p.message;
  }
  return "no error";
}

}  // namespace

TEST_CASE("plan serve crosses each layout with the KV tiers, the tier fastest, and each tier "
          "row is what serve says for that tier",
          "[run][plan][serve][kv][offload]") {
  const run::PlanServeAnswer a = run::plan_serve(request());
  REQUIRE(a.rows.size() == 4);
  REQUIRE(a.space.kv_tiers.size() == 2);
  CHECK(a.space.has_kv_tiers());
  // Row order: replicas 1, 2 (slower), then no tier, 4 GiB (fastest).
  const std::vector<std::int64_t> replicas = {1, 1, 2, 2};
  const std::vector<Bytes> hosts = {Bytes(0), GiB(4), Bytes(0), GiB(4)};
  for (std::size_t i = 0; i < 4; ++i) {
    const run::PlanServeRow& r = a.rows[i];
    INFO("row " << i << ": " << r.flags());
    CHECK(r.replicas == replicas[i]);
    CHECK(r.kv_tier.host == hosts[i]);
    CHECK(r.kv_tier.disk == Bytes(0));
    REQUIRE(r.simulated());
    // 4 GiB hold 2048 blocks of 2 MiB: the host memory is exactly 4 GiB per replica.
    CHECK(r.host_memory_bytes == hosts[i] * r.replicas);
    if (hosts[i] == Bytes(0)) {
      CHECK(r.cpu_prefix_hit_rate == 0.0);
      CHECK(r.kv_tier_text() == "none");
      CHECK(r.flags().find("--kv-offloading-size") == std::string::npos);
    } else {
      // The tier turns GPU misses into CPU hits: more of the prompts is found.
      CHECK(r.cpu_prefix_hit_rate > 0.0);
      CHECK(r.gpu_prefix_hit_rate + r.cpu_prefix_hit_rate >
            a.rows[i - 1].gpu_prefix_hit_rate + a.rows[i - 1].cpu_prefix_hit_rate);
      CHECK(r.kv_tier_text() == "4GiB");
      CHECK(r.flags().find(" --kv-offloading-size 4GiB") != std::string::npos);
    }
    CHECK(r.disk_prefix_hit_rate == 0.0);
  }
  // One replica: the plan's p99 TTFT is serve's for the same flags.
  CHECK(a.rows[0].ttft_p99 == serve_ttft_p99(""));
  CHECK(a.rows[1].ttft_p99 == serve_ttft_p99("kv_offloading_size = \"4GiB\"\n"));
  // The JSON of a listed row carries the tier's columns.
  const nlohmann::ordered_json t = run::serve_plan_row_typed(a.rows[1], false, true).to_json();
  CHECK(t["kv_offloading_size_bytes"] == GiB(4).count());
  CHECK(t["host_memory_bytes"] == GiB(4).count());
  CHECK(t["cpu_prefix_hit_rate"] == a.rows[1].cpu_prefix_hit_rate);
}

TEST_CASE("with a TTFT objective between one GPU's p99 with and without the tier, the plan "
          "ranks one GPU with the tier above two GPUs without it",
          "[run][plan][serve][kv][offload]") {
  const Duration none = serve_ttft_p99("");
  const Duration tier = serve_ttft_p99("kv_offloading_size = \"4GiB\"\n");
  INFO("p99 TTFT without the tier " << none.seconds() << " s, with it " << tier.seconds()
                                    << " s");
  REQUIRE(tier < none);
  run::PlanServeRequest q = request();
  q.options.slo_ttft = Duration::from_seconds((none.seconds() + tier.seconds()) / 2);
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 4);
  CHECK(a.rows[0].status == run::ServePlanStatus::kMisses);  // 1 GPU, no tier
  CHECK(a.rows[1].status == run::ServePlanStatus::kMeets);   // 1 GPU, 4 GiB tier
  REQUIRE_FALSE(a.cheapest.empty());
  // The tier costs no GPU-hours: one GPU with it is the cheapest deployment that meets.
  CHECK(a.cheapest.front() == 1);
  CHECK(a.rows[1].num_gpus() == 1);
  CHECK(run::plan_serve_message(a).find("--kv-offloading-size 4GiB") != std::string::npos);
  const nlohmann::ordered_json j = run::plan_serve_json(a);
  CHECK(j["num_skipped_max_host_memory"] == 0);
  CHECK(j["search"]["kv_tiers"].size() == 2);
  CHECK(j["cheapest"][0]["cpu_prefix_hit_rate"].get<double>() > 0.0);
}

TEST_CASE("plan serve --max-host-memory skips the rows whose tiers need more host memory, with "
          "the reason",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request();
  q.max_host_memory = "6GiB";  // one 4 GiB tier fits, two (8 GiB) do not
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 4);
  CHECK(a.rows[1].simulated());
  CHECK(a.rows[3].status == run::ServePlanStatus::kOverMaxHostMemory);
  CHECK(a.rows[3].host_memory_bytes == GiB(8));
  CHECK(a.rows[3].reason ==
        "KV tiers take 8.00 GiB of host memory (2 instances x 4.00 GiB) > --max-host-memory "
        "6.00 GiB");
  CHECK(a.counts.num_skipped_max_host_memory == 1);
  CHECK(a.counts.num_simulated == 3);
}

TEST_CASE("a disk tier is crossed with each non-zero host tier and needs the disk bandwidths",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request(
      "kv_offloading_disk_read_bandwidth = \"7GB/s\"\n"
      "kv_offloading_disk_write_bandwidth = \"5GB/s\"\n");
  q.replicas = {1};
  q.kv_offloading_sizes = {"0", "256MiB"};
  q.kv_offloading_disk_sizes = {"0", "4GiB"};
  const run::PlanServeSpace sp = run::plan_serve_space(q);
  REQUIRE(sp.kv_tiers.size() == 3);  // none; 256 MiB; 256 MiB + 4 GiB disk
  CHECK(sp.kv_tiers[0] == run::PlanServeKvTier{Bytes(0), Bytes(0)});
  CHECK(sp.kv_tiers[1] == run::PlanServeKvTier{MiB(256), Bytes(0)});
  CHECK(sp.kv_tiers[2] == run::PlanServeKvTier{MiB(256), GiB(4)});
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 3);
  for (const run::PlanServeRow& r : a.rows) REQUIRE(r.simulated());
  CHECK(a.rows[2].kv_tier_text() == "256MiB + disk 4GiB");
  CHECK(a.rows[2].disk_bytes == GiB(4));
  CHECK(a.rows[2].host_memory_bytes == MiB(256));
  // A 128-block host tier holds two of the eight 64-block prefixes; the 2048-block disk holds
  // them all, so it serves prefixes the host tier has dropped.
  CHECK(a.rows[2].disk_prefix_hit_rate > 0.0);
  CHECK(a.rows[1].disk_prefix_hit_rate == 0.0);
  SECTION("without the bandwidths the disk sizes are refused, naming the list") {
    run::PlanServeRequest bare = request();
    bare.kv_offloading_disk_sizes = {"4GiB"};
    CHECK(problem_of(bare) ==
          "plan.kv_offloading_disk_sizes: a disk tier needs --kv-offloading-disk-read-bandwidth "
          "and --kv-offloading-disk-write-bandwidth (e.g. 7GB/s and 5GB/s; measure your disk, "
          "e.g. with fio)");
  }
}

TEST_CASE("bad KV tier lists are refused naming the list", "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request();
  q.kv_offloading_sizes = {"200"};
  CHECK(problem_of(q).rfind("plan.kv_offloading_sizes: '200': ", 0) == 0);
  q.kv_offloading_sizes = {"4GiB", "4GiB"};
  CHECK(problem_of(q) == "plan.kv_offloading_sizes: 4GiB is listed twice");
  q.kv_offloading_sizes = {"-4GiB"};
  CHECK(problem_of(q).rfind("plan.kv_offloading_sizes: '-4GiB': ", 0) == 0);
  q.kv_offloading_sizes = {"0"};
  q.kv_offloading_disk_sizes = {"1TiB"};
  q.options = options(
      "kv_offloading_disk_read_bandwidth = \"7GB/s\"\n"
      "kv_offloading_disk_write_bandwidth = \"5GB/s\"\n");
  CHECK(problem_of(q) ==
        "plan.kv_offloading_disk_sizes: a disk tier sits behind a host tier: give a non-zero "
        "--search-kv-offloading-size (or --kv-offloading-size) too");
  run::PlanServeRequest no_prefix = request("", "[serving]\nenable_prefix_caching = false\n");
  CHECK(problem_of(no_prefix) ==
        "plan.kv_offloading_sizes: a host KV tier needs prefix caching (--enable-prefix-caching): "
        "the tier is looked up by prefix block hashes");
  run::PlanServeRequest host = request();
  host.max_host_memory = "lots";
  CHECK(problem_of(host).rfind("plan.max_host_memory: 'lots': ", 0) == 0);
  host.max_host_memory = "0GiB";
  CHECK(problem_of(host) == "plan.max_host_memory: must be a positive size, got 0GiB");
  // A tier too small to hold one block is a row the engine refuses, with serve's reason.
  run::PlanServeRequest tiny = request();
  tiny.replicas = {1};
  tiny.kv_offloading_sizes = {"1MiB"};
  const run::PlanServeAnswer a = run::plan_serve(tiny);
  REQUIRE(a.rows.size() == 1);
  CHECK(a.rows[0].status == run::ServePlanStatus::kInvalid);
  CHECK(a.rows[0].reason.find("engine.kv_offloading_size: 1.00 MiB holds no KV block") == 0);
}

TEST_CASE("a KV tier search is the same whatever the threads, and without the lists the search "
          "has no tier axis",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request();
  q.jobs = 1;
  const nlohmann::ordered_json one = run::plan_serve_json(run::plan_serve(q));
  q.jobs = 2;
  const nlohmann::ordered_json two = run::plan_serve_json(run::plan_serve(q));
  CHECK(one.dump() == two.dump());
  run::PlanServeRequest plain = request();
  plain.kv_offloading_sizes.clear();
  const run::PlanServeSpace sp = run::plan_serve_space(plain);
  CHECK(sp.kv_tiers.size() == 1);
  CHECK_FALSE(sp.has_kv_tiers());
  const nlohmann::ordered_json j = run::plan_serve_json(run::plan_serve(plain));
  CHECK_FALSE(j["search"].contains("kv_tiers"));
  CHECK_FALSE(j.contains("num_skipped_max_host_memory"));
  CHECK_FALSE(j["cheapest"].empty());
  CHECK_FALSE(j["cheapest"][0].contains("host_memory_bytes"));
}

TEST_CASE("a row's KV tier columns survive its journal record, with or without a tier",
          "[run][plan][serve][kv][offload]") {
  for (const Bytes host : {Bytes(0), GiB(200)}) {
    run::PlanServeRow r;
    r.index = 3;
    r.gpu = "h100-sxm";
    r.quantization = "none";
    r.kv_cache_dtype = "auto";
    r.kv_tier = {host, Bytes(0)};
    const run::PlanServeRow settings = r;
    r.status = run::ServePlanStatus::kMisses;
    r.host_memory_bytes = host;
    r.gpu_prefix_hit_rate = 0.25;
    r.cpu_prefix_hit_rate = host > Bytes(0) ? 0.125 : 0.0;
    run::PlanServeRow back = settings;
    REQUIRE(run::serve_plan_row_from_record(run::serve_plan_row_record(r, "fp"), "fp", back));
    CHECK(back.host_memory_bytes == host);
    CHECK(back.gpu_prefix_hit_rate == 0.25);
    CHECK(back.cpu_prefix_hit_rate == r.cpu_prefix_hit_rate);
  }
}
