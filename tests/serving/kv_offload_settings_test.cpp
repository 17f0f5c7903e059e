// The KV offload tier's settings (engine.kv_offloading_size / --kv-offloading-size and
// engine.kv_offloading_backend, as vLLM names them): the host memory `budget` reports, bad values
// refused at their origin, and a serve run that reports both tiers' hit rates and the bytes moved.
#include "sim/run/serve_options.hpp"

#include "sim/core/error.hpp"
#include "sim/run/serve_results.hpp"

#include <string>

#include "tests/catch.hpp"

using namespace vramsim;

namespace {

const std::string kBase =
    "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
    "[engine]\nmax_model_len = 4096\n";

run::ServeOptions options(const std::string& extra) {
  return run::resolve_serve_options(run::load_serve_scenario_text(kBase + extra, "s.toml"));
}

/// The one problem of resolving and preparing `extra`, as "field | line | message".
std::string problem_of(const std::string& extra) {
  try {
    (void)run::prepare_serve(options(extra));
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const Problem& p = e.report().problems().front();
    return p.field + " | " + std::to_string(p.where.line) + " | " + p.message;
  }
  return "no error";
}

}  // namespace

TEST_CASE("budget reports the offload tier's host memory in whole KV blocks of the replica",
          "[serving][kv][offload]") {
  // Llama-3.1-8B, bf16 KV: 32 layers * 8 KV heads * 128 * 2 (K, V) * 2 B = 131,072 B per token,
  // 2 MiB per 16-token block; 8 GiB hold 4096 blocks (vLLM: cpu_bytes_to_use // block bytes).
  run::ServeOptions o = options("kv_offloading_size = \"8GiB\"\n");
  const run::BudgetAnswer b = run::answer_budget(o, run::budget_request(o));
  CHECK(b.kv_offload.bytes_per_block == MiB(2));
  CHECK(b.kv_offload.num_blocks == 4096);
  CHECK(b.kv_offload.host_bytes == GiB(8));
  SECTION("with TP=2 the size is the sum over both ranks, as vLLM counts it") {
    o = options("tp = 2\nkv_offloading_size = \"8GiB\"\n");
    const run::BudgetAnswer b2 = run::answer_budget(o, run::budget_request(o));
    CHECK(b2.kv_offload.bytes_per_block == MiB(2));  // 1 MiB on each rank
    CHECK(b2.kv_offload.num_blocks == 4096);
  }
  SECTION("no tier, no host memory") {
    o = options("");
    const run::BudgetAnswer none = run::answer_budget(o, run::budget_request(o));
    CHECK(none.kv_offload.num_blocks == 0);
    CHECK(none.kv_offload.host_bytes == Bytes(0));
  }
}

TEST_CASE("bad KV offload settings are refused at their file and line",
          "[serving][kv][offload]") {
  // Line 7 of the scenario is the first after kBase's six.
  CHECK(problem_of("kv_offloading_size = \"8\"\n").rfind("engine.kv_offloading_size | 7 | ", 0) ==
        0);
  CHECK(problem_of("kv_offloading_backend = \"lmcach\"\n") ==
        "engine.kv_offloading_backend | 7 | unknown value 'lmcach'; valid: native (vLLM's "
        "OffloadingConnector), lmcache (LMCacheConnectorV1 with LMCache's CPU tier)");
  CHECK(problem_of("kv_offloading_size = \"8GiB\"\n[serving]\nenable_prefix_caching = false\n") ==
        "engine.kv_offloading_size | 7 | needs serving.enable_prefix_caching "
        "(--enable-prefix-caching): the offload tier is looked up by prefix block hashes");
  const std::string small = problem_of("kv_offloading_size = \"1MiB\"\n");
  CHECK(small.rfind("engine.kv_offloading_size | 7 | ", 0) == 0);
  CHECK(small.find("holds no KV block") != std::string::npos);
}

TEST_CASE("serve with an offload tier reports hit rates per tier and the bytes moved each way",
          "[serving][kv][offload]") {
  // 200 requests of 8 shared-prefix groups (1024 prefix tokens) on a GPU cache cut to 300 blocks
  // (4800 tokens, one 4096-token request fits): the groups' prefixes (64 blocks each, 512 in
  // all) do not all stay on the GPU.
  const std::string workload =
      "num_gpu_blocks = 300\n[workload]\nsynthetic = \"poisson\"\nrate = 50.0\n"
      "num_requests = 200\nprompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\n"
      "prefix_groups = 8\nprefix_tokens = 1024\n";
  run::ServeAnswer off = run::prepare_serve(options(workload));
  run::simulate_serve(off, nullptr);
  run::ServeAnswer on = run::prepare_serve(options("kv_offloading_size = \"4GiB\"\n" + workload));
  REQUIRE(on.config.setup.replica.kv.num_offload_blocks == 2048);
  run::simulate_serve(on, nullptr);

  const nlohmann::ordered_json j_off = run::serve_json(off);
  const nlohmann::ordered_json j = run::serve_json(on);
  CHECK(j_off["kv_offload_num_blocks"] == 0);
  CHECK(j_off["kv_offload_h2d_bytes"] == 0);
  CHECK(j_off["cpu_prefix_hit_rate"] == 0.0);
  CHECK(j_off["gpu_prefix_hit_rate"] == j_off["prefix_hit_rate"]);

  CHECK(j["kv_offload_num_blocks"] == 2048);
  const double cpu = j["cpu_prefix_hit_rate"].get<double>();
  const double gpu = j["gpu_prefix_hit_rate"].get<double>();
  CHECK(cpu > 0.0);
  CHECK(gpu + cpu == Approx(j["prefix_hit_rate"].get<double>()));
  CHECK(j["prefix_hit_rate"].get<double>() > j_off["prefix_hit_rate"].get<double>());
  // Bytes: blocks moved times 2 MiB (every device's share of a block).
  CHECK(j["kv_offload_h2d_bytes"].get<std::int64_t>() ==
        on.result.num_blocks_offload_loaded * MiB(2).count());
  CHECK(j["kv_offload_d2h_bytes"].get<std::int64_t>() ==
        on.result.num_blocks_offload_stored * MiB(2).count());
  CHECK(on.result.num_blocks_offload_loaded * 16 == on.result.offload_hit_tokens);
  // The copy times at the pinned rates: the device sheet's PCIe bandwidth (H100 SXM: Gen5,
  // 64 GB/s per direction) x 0.80 = 51.2 GB/s each way (run::host_copy_rate).
  CHECK(j["inputs"]["host_to_device_bytes_per_s"].get<double>() == Approx(51.2e9));
  CHECK(j["inputs"]["device_to_host_bytes_per_s"].get<double>() == Approx(51.2e9));
  CHECK(j["kv_offload_h2d_s"].get<double>() ==
        Approx(static_cast<double>(on.result.num_blocks_offload_loaded) * (1 << 21) / 51.2e9));
  CHECK(j["kv_offload_d2h_s"].get<double>() ==
        Approx(static_cast<double>(on.result.num_blocks_offload_stored) * (1 << 21) / 51.2e9));
  CHECK(j["inputs"]["host_to_device_source"].get<std::string>() ==
        "device sheet h100-sxm: PCIe Gen5 x16, 64.0 GB/s per direction x 0.80 (pinned "
        "host-to-device copies, datasheet_constants.hpp) = 51.2 GB/s");
  CHECK(j["inputs"]["device_to_host_source"].get<std::string>() ==
        "device sheet h100-sxm: PCIe Gen5 x16, 64.0 GB/s per direction x 0.80 (device-to-host "
        "copies into pinned memory, datasheet_constants.hpp) = 51.2 GB/s");
  // Loading a prefix is cheaper than computing it: the mean TTFT drops.
  CHECK(j["ttft_mean_s"].get<double>() < j_off["ttft_mean_s"].get<double>());
}
