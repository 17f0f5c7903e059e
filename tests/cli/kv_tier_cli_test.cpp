// The KV offload tier flags of `vramsim plan serve` (--search-kv-offloading-size,
// --search-kv-offloading-disk-size, --max-host-memory) and `vramsim compare serve`
// (--compare-kv-tier) from the command line, and budget's tier against the node's host memory
// (issue 16): a valid run of each, and each flag's bad value refused with exit 2, naming the flag.
#include <nlohmann/json.hpp>

#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::run;
using vramsim::testing::Run;

namespace {

// tests/run/plan_serve_kv_tier_test.cpp's prefix-heavy workload: Llama-3.1-8B on an H100 with
// its GPU cache cut to 300 blocks (2 MiB each), 200 requests in 8 groups sharing 1024-token
// prefixes, so a host tier turns GPU misses into CPU hits.
const std::string kWorkload =
    " meta-llama/Llama-3.1-8B --gpu h100-sxm --max-model-len 4096 --num-gpu-blocks 300 "
    "--synthetic poisson --rate 50 --num-requests 200 --prompt-tokens fixed:1100 "
    "--output-tokens fixed:4 --prefix-groups 8 --prefix-tokens 1024 --seed 1";
const std::string kPlan =
    "plan serve" + kWorkload + " --search-tp 1 --search-replicas 1,2 --no-capacity";
const std::string kDisk =
    " --kv-offloading-disk-read-bandwidth 7GB/s --kv-offloading-disk-write-bandwidth 5GB/s";

// Runs `args`, expecting exit 2 and `message` after "error: ".
void refused(const std::string& args, const std::string& message) {
  const Run r = run(args);
  INFO(args << "\n" << r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("error: " + message) != std::string::npos);
}

}  // namespace

TEST_CASE("plan serve searches the KV tier sizes from the command line and says where its host "
          "memory bound came from",
          "[cli][plan][serve][kv][offload]") {
  const Run r = run(kPlan + " --search-kv-offloading-size 0,4GiB --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // 1, 2 replicas x no tier, 4 GiB: every row simulated (2 x 4 GiB fit the DGX H100's 2 TiB).
  CHECK(j["num_configs"] == 4);
  CHECK(j["num_simulated"] == 4);
  CHECK(j["num_skipped_max_host_memory"] == 0);
  CHECK(j["host_memory_bound"] ==
        "node sheets' host_memory, per node (the engines on a node share it): h100-sxm on "
        "h100-sxm-8x-nvswitch (2048.00 GiB)");

  // --max-host-memory 6GiB: one 4 GiB tier fits, two (8 GiB) do not; the table says the bound.
  const Run t = run(kPlan + " --search-kv-offloading-size 0,4GiB --max-host-memory 6GiB");
  INFO(t.out);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("1 above the host memory bound") != std::string::npos);
  CHECK(t.out.find("host memory bound: --max-host-memory 6.00 GiB: the deployment's KV tiers "
                   "together") != std::string::npos);

  // A disk tier behind the 4 GiB host tier: 1, 2 replicas x (none, 4 GiB + 8 GiB disk).
  const Run d = run(kPlan + kDisk +
                    " --search-kv-offloading-size 0,4GiB --search-kv-offloading-disk-size 8GiB "
                    "--format json");
  INFO(d.out);
  REQUIRE(d.exit_code == 0);
  CHECK(nlohmann::json::parse(d.out)["num_simulated"] == 4);
}

TEST_CASE("plan serve refuses each bad KV tier flag with exit 2 naming it",
          "[cli][plan][serve][kv][offload]") {
  refused(kPlan + " --search-kv-offloading-size 0,lots", "--search-kv-offloading-size: 'lots': ");
  refused(kPlan + " --search-kv-offloading-size 4GiB,4GiB",
          "--search-kv-offloading-size: 4GiB is listed twice");
  refused(kPlan + " --search-kv-offloading-size 4GiB --no-enable-prefix-caching",
          "--search-kv-offloading-size: a host KV tier needs prefix caching");
  refused(kPlan + kDisk +
              " --search-kv-offloading-size 4GiB --search-kv-offloading-disk-size 8GB/s",
          "--search-kv-offloading-disk-size: '8GB/s': ");
  refused(kPlan + " --search-kv-offloading-size 4GiB --search-kv-offloading-disk-size 8GiB",
          "--search-kv-offloading-disk-size: a disk tier needs "
          "--kv-offloading-disk-read-bandwidth");
  refused(kPlan + kDisk + " --search-kv-offloading-size 0 --search-kv-offloading-disk-size 8GiB",
          "--search-kv-offloading-disk-size: a disk tier sits behind a host tier");
  refused(kPlan + " --search-kv-offloading-size 4GiB --max-host-memory lots",
          "--max-host-memory: 'lots': ");
  refused(kPlan + " --search-kv-offloading-size 4GiB --max-host-memory 0GiB",
          "--max-host-memory: must be a positive size, got 0GiB");
}

TEST_CASE("compare serve --compare-kv-tier adds one GPU with the tier, and is refused without a "
          "tier",
          "[cli][compare][serve][kv][offload]") {
  const Run r = run("compare serve" + kWorkload +
                    " --kv-offloading-size 4GiB --compare-kv-tier --max-runs 4 --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& o : j["options"]) {
    if (o["name"] != "1 GPU + KV tier") continue;
    seen = true;
    CHECK(o["kv_offload_host_bytes_per_replica"] == 4LL << 30);
  }
  CHECK(seen);
  refused("compare serve" + kWorkload + " --compare-kv-tier --max-runs 4",
          "--compare-kv-tier: compares one GPU with the base's KV offload tier");
  // A value on the flag is not a switch's: CLI11 names the flag, exit 2.
  const Run bad = run("compare serve" + kWorkload +
                      " --kv-offloading-size 4GiB --compare-kv-tier=maybe --max-runs 4");
  INFO(bad.out);
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("--compare-kv-tier = maybe") != std::string::npos);
}

TEST_CASE("budget reports a KV offload tier against the node's host memory and warns above it",
          "[cli][budget][kv][offload]") {
  const std::string budget =
      "budget --model meta-llama/Llama-3.1-8B-Instruct --gpu h100-sxm --max-model-len 8192 ";
  const Run ok = run(budget + "--kv-offloading-size 4GiB");
  INFO(ok.out);
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out.find("host memory: 1 engine(s) pin 4.00 GiB of the 2048.00 GiB host_memory of "
                    "node sheet h100-sxm-8x-nvswitch") != std::string::npos);
  // 3 TiB > the DGX H100's 2 TiB: a warning naming the flag and the sheet; the GPU still fits
  // and the exit is 0 (the node is the GPU's default sheet, not the user's server).
  const Run big = run(budget + "--kv-offloading-size 3TiB");
  INFO(big.out);
  REQUIRE(big.exit_code == 0);
  CHECK(big.out.find("WARNING: engine.kv_offloading_size (--kv-offloading-size): 1 engine(s) pin "
                     "3072.00 GiB of host memory, more than the 2048.00 GiB host_memory of node "
                     "sheet h100-sxm-8x-nvswitch") != std::string::npos);
  CHECK(big.out.find("Fits: yes") != std::string::npos);
  const Run json = run(budget + "--kv-offloading-size 3TiB --format json");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out)["kv_offload_fits_host_memory"] == false);
}
