// The KV disk tier behind the host-memory offload tier (kv_cache_manager.hpp, as LMCache's
// local_disk backend): write-through from the host tier, its own LRU, hits read from disk into
// host memory and copied to the GPU, asynchronous writes, the settings that turn it on and the
// hit rates per tier that serve reports.
#include "sim/serving/kv_cache_manager.hpp"

#include "sim/core/error.hpp"
#include "sim/run/budget_results.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "tests/serving/kv_tier_fixture.hpp"

#include <string>
#include <vector>

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using vramsim::serving::testing::admit;
using vramsim::serving::testing::Hashes;
using vramsim::serving::testing::KeepAll;
using vramsim::serving::testing::kv_tier_config;
using vramsim::serving::testing::LinearTimeModel;
using vramsim::serving::testing::make_request;
using vramsim::serving::testing::millisecond_steps;
using vramsim::serving::testing::prefix_replay_setup;
using vramsim::serving::testing::with_prefix;

namespace {

const std::string kBase =
    "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
    "[engine]\nmax_model_len = 4096\n";

run::ServeOptions options(const std::string& extra) {
  return run::resolve_serve_options(run::load_serve_scenario_text(kBase + extra, "s.toml"));
}

/// The problems of resolving and preparing `extra`, each as "field | message", joined by "\n".
std::string problems_of(const std::string& extra) {
  try {
    (void)run::prepare_serve(options(extra));
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) {
      if (!out.empty()) out += "\n";
      out += p.field + " | " + p.message;
    }
    return out;
  }
  return "no error";
}

}  // namespace

TEST_CASE("a block leaves the GPU for host memory, host memory for disk, and is hit on disk",
          "[serving][kv][offload][disk]") {
  // Blocks of 4 tokens; 3 GPU blocks, a host tier of 2, a disk tier of 8.
  //   A (9 tokens, hashes 101 102): 3 GPU blocks; its 2 full blocks go to host memory and,
  //     written through, to disk.
  //   B (9 tokens, 201 202): takes all 3 GPU blocks (evicting A's 2 cached ones) and stores
  //     its 2 blocks in host memory, which drops 102 then 101 (least recently used first:
  //     touching A made 101 the newest). Disk keeps all 4.
  //   C (9 tokens, A's prefix): GPU and host miss; disk holds both: 8 tokens are loaded
  //     (disk -> host -> GPU), 1 computed. The read is put back into host memory.
  KvCacheManager kv(kv_tier_config(3, 2, 8));
  Request a = make_request(0, 9, {101, 102});
  Request b = make_request(1, 9, {201, 202});
  Request cc = make_request(2, 9, {101, 102});

  REQUIRE(admit(kv, a));
  OffloadTraffic t = kv.take_offload_traffic();
  CHECK(t.blocks_stored == 2);
  CHECK(t.blocks_disk_written == 2);  // write-through, not on eviction
  CHECK(kv.offload_tier()->lru_order() == Hashes{102, 101});
  CHECK(kv.disk_tier()->lru_order() == Hashes{101, 102});
  kv.free(a);

  REQUIRE(admit(kv, b));
  CHECK(kv.stats().num_evictions == 2);  // A's two cached GPU blocks
  t = kv.take_offload_traffic();
  CHECK(t.blocks_stored == 2);
  CHECK(t.blocks_disk_written == 2);
  CHECK(kv.offload_tier()->lru_order() == Hashes{202, 201});  // 102, 101 evicted
  CHECK(kv.offload_tier()->num_evictions() == 2);
  CHECK(kv.disk_tier()->lru_order() == Hashes{101, 102, 201, 202});
  kv.free(b);

  CHECK(kv.cached_prefix_tokens(cc) == 8);  // both blocks, from disk
  REQUIRE(admit(kv, cc));
  t = kv.take_offload_traffic();
  CHECK(t.blocks_disk_read == 2);
  CHECK(t.blocks_loaded == 2);  // each disk read is then copied host to device
  CHECK(t.blocks_stored == 0);
  CHECK(t.blocks_disk_written == 0);
  // Read back into host memory (evicting 202 then 201), then touched: 101 newest.
  CHECK(kv.offload_tier()->lru_order() == Hashes{102, 101});
  // Disk: the hits touched, the last first.
  CHECK(kv.disk_tier()->lru_order() == Hashes{201, 202, 102, 101});
  const KvCacheStats& s = kv.stats();
  CHECK(s.prefix_query_tokens == 27);
  CHECK(s.prefix_hit_tokens == 8);
  CHECK(s.disk_hit_tokens == 8);
  CHECK(s.offload_hit_tokens == 0);
  CHECK(s.num_blocks_disk_loaded == 2);
  CHECK(s.num_blocks_disk_stored == 4);
  CHECK(s.num_blocks_offload_loaded == 2);
  CHECK(s.num_blocks_offload_stored == 4);
  CHECK(s.num_disk_evictions == 0);
  kv.check_invariants();

  SECTION("the next request with that prefix hits it on the GPU") {
    kv.free(cc);
    Request d = make_request(3, 9, {101, 102});
    REQUIRE(admit(kv, d));
    CHECK(kv.take_offload_traffic().blocks_disk_read == 0);
    CHECK(kv.stats().disk_hit_tokens == 8);
    CHECK(kv.stats().prefix_hit_tokens == 16);
  }
}

TEST_CASE("the disk tier evicts least recently used, and a lookup spans host and disk blocks",
          "[serving][kv][offload][disk]") {
  // Host tier 1 block, disk 3. A (13 tokens: 101 102 103) writes 3 blocks through to disk;
  // host memory keeps only what fits: nothing (3 > 1, vLLM's prepare_store refuses the range),
  // so the disk is not offered it either. B, one block at a time, shows the LRU on disk.
  KvCacheManager kv(kv_tier_config(16, 1, 3));
  Request a = make_request(0, 13, {101, 102, 103});
  REQUIRE(admit(kv, a));
  CHECK(kv.take_offload_traffic().blocks_disk_written == 0);
  CHECK(kv.disk_tier()->num_used() == 0);
  // A request with one full block per step: host holds the newest, disk the three newest.
  for (RequestId id = 1; id <= 4; ++id) {
    Request r = make_request(id, 5, {static_cast<BlockHash>(300 + id)});
    REQUIRE(admit(kv, r));
    kv.free(r);
  }
  CHECK(kv.offload_tier()->lru_order() == Hashes{304});
  CHECK(kv.disk_tier()->lru_order() == Hashes{302, 303, 304});
  CHECK(kv.disk_tier()->num_evictions() == 1);  // 301
  CHECK(kv.stats().num_disk_evictions == 1);
  CHECK(kv.stats().num_blocks_disk_stored == 4);
}

TEST_CASE("a replayed trace hits its prefix on disk and pays the disk read before the copy",
          "[serving][kv][offload][disk]") {
  // Block size 16, 3 GPU blocks, 1 MiB per block per device, 25 GB/s host link; host tier 2
  // blocks, disk 8 blocks of 2 MiB (two devices' shares: both write to the one disk), read at
  // 2 GB/s, written at 1 GB/s. Steps of 1 ms + 10 us per token.
  //   A (t=0, 33 tokens, ids 1 2 3): 2 full blocks stored in host memory and on disk.
  //   B (t=1 s, 33 tokens, ids 7 8 9): evicts A's blocks from the GPU and from host memory.
  //   C (t=2 s, A's prefix): 32 tokens from disk, 1 computed.
  const std::vector<TraceRecord> trace = {with_prefix(0.0, 33, {1, 2, 3}),
                                          with_prefix(1.0, 33, {7, 8, 9}),
                                          with_prefix(2.0, 33, {1, 2, 3})};
  ServingSetup setup = prefix_replay_setup(3);
  setup.replica.kv.num_offload_blocks = 2;
  setup.replica.kv.num_disk_blocks = 8;
  setup.replica.disk_read = GBps(2.0);
  setup.replica.disk_write = GBps(1.0);
  setup.replica.disk_bytes_per_block = Bytes(2 << 20);
  const LinearTimeModel model = millisecond_steps();
  KeepAll keep;
  const ServingResult r = vramsim::serving::testing::run(trace, setup, model, &keep);

  REQUIRE(r.metrics.num_finished == 3);
  CHECK(r.prefix_query_tokens == 99);
  CHECK(r.prefix_hit_tokens == 32);
  CHECK(r.disk_hit_tokens == 32);
  CHECK(r.offload_hit_tokens == 0);
  CHECK(r.num_blocks_disk_loaded == 2);
  CHECK(r.num_blocks_disk_stored == 4);  // A's 2 and B's 2
  CHECK(r.num_blocks_offload_loaded == 2);
  CHECK(r.num_blocks_offload_stored == 4);
  CHECK(r.gpu_prefix_hit_rate() == 0.0);
  CHECK(r.offload_prefix_hit_rate() == 0.0);
  CHECK(r.disk_prefix_hit_rate() == Approx(32.0 / 99.0));
  // Writes: 4 blocks * 2 MiB at 1 GB/s = 2 * 4,194,304 ns, in two bursts a second apart.
  CHECK(r.disk_write_busy == Duration::from_nanoseconds(8'388'608));
  CHECK(r.disk_write_backlog_peak == Duration::from_nanoseconds(4'194'304));

  // C's load: disk read 2 * 2 MiB = 4,194,304 B at 2e9 B/s = 2,097,152 ns, then the host to
  // device copy of 2 * 1 MiB at 25e9 B/s = 83,886 ns; then 1 ms + 1 token * 10 us.
  REQUIRE(keep.requests.size() == 3);
  for (const RequestRecord& q : keep.requests) {
    const Duration ttft = q.first_token - q.arrival;
    INFO("request " << q.id);
    // A and B: the disk writes (4.19 ms each, longer than the step) do not delay them.
    if (q.id == 0 || q.id == 1) CHECK(ttft == Duration::from_nanoseconds(1'330'000));
    if (q.id == 2) {
      CHECK(q.cached_prefix_tokens == 32);
      CHECK(ttft == Duration::from_nanoseconds(1'010'000 + 2'097'152 + 83'886));
    }
  }

  SECTION("without the disk tier C recomputes A's prefix") {
    setup.replica.kv.num_disk_blocks = 0;
    KeepAll keep_off;
    const ServingResult off = vramsim::serving::testing::run(trace, setup, model, &keep_off);
    CHECK(off.prefix_hit_tokens == 0);
    CHECK(off.num_blocks_disk_stored == 0);
    CHECK(off.disk_write_busy == Duration::zero());
    REQUIRE(keep_off.requests.size() == 3);
    CHECK(keep_off.requests[2].first_token - keep_off.requests[2].arrival ==
          Duration::from_nanoseconds(1'330'000));
  }
}

TEST_CASE("the disk tier is refused without the host tier or without its bandwidths",
          "[serving][kv][offload][disk]") {
  const std::string disk = "kv_offloading_disk_size = \"200GiB\"\n";
  const std::string bw = "kv_offloading_disk_read_bandwidth = \"7GB/s\"\n"
                         "kv_offloading_disk_write_bandwidth = \"5GB/s\"\n";
  CHECK(problems_of(disk + bw) ==
        "engine.kv_offloading_disk_size | needs engine.kv_offloading_size "
        "(--kv-offloading-size): the disk tier is written through from the host-memory tier "
        "and read back through it");
  const std::string host = "kv_offloading_size = \"4GiB\"\n";
  CHECK(problems_of(host + disk) ==
        "engine.kv_offloading_disk_read_bandwidth | the KV disk tier needs "
        "--kv-offloading-disk-read-bandwidth (e.g. 7GB/s, decimal GB): no datasheet gives it "
        "for your disk; measure it, e.g. with fio\n"
        "engine.kv_offloading_disk_write_bandwidth | the KV disk tier needs "
        "--kv-offloading-disk-write-bandwidth (e.g. 7GB/s, decimal GB): no datasheet gives it "
        "for your disk; measure it, e.g. with fio");
  CHECK(problems_of(host + bw) ==
        "engine.kv_offloading_disk_read_bandwidth | --kv-offloading-disk-read-bandwidth is for "
        "the KV disk tier: give --kv-offloading-disk-size too\n"
        "engine.kv_offloading_disk_write_bandwidth | --kv-offloading-disk-write-bandwidth is "
        "for the KV disk tier: give --kv-offloading-disk-size too");
  const std::string bits = problems_of(host + disk +
                                       "kv_offloading_disk_read_bandwidth = \"7GB\"\n"
                                       "kv_offloading_disk_write_bandwidth = \"5GB/s\"\n");
  CHECK(bits.rfind("engine.kv_offloading_disk_read_bandwidth | ", 0) == 0);
  CHECK(bits.find("per-second unit") != std::string::npos);
  const std::string zero = problems_of(host + disk +
                                       "kv_offloading_disk_read_bandwidth = \"0GB/s\"\n"
                                       "kv_offloading_disk_write_bandwidth = \"5GB/s\"\n");
  CHECK(zero == "engine.kv_offloading_disk_read_bandwidth | must be positive, got '0GB/s'");
  const std::string small = problems_of(host + bw + "kv_offloading_disk_size = \"1MiB\"\n");
  CHECK(small.rfind("engine.kv_offloading_disk_size | ", 0) == 0);
  CHECK(small.find("holds no KV block") != std::string::npos);
}

TEST_CASE("serve with a disk tier reports hit rates per tier that add up, and budget its size",
          "[serving][kv][offload][disk]") {
  // 200 requests of 16 shared-prefix groups (1024 prefix tokens, 64 blocks each: 1024 in all)
  // on 300 GPU blocks and a 256-block (512 MiB) host tier: most prefixes leave both; a 4 GiB
  // disk (2048 blocks of 2 MiB) keeps them all.
  const std::string workload =
      "num_gpu_blocks = 300\nkv_offloading_size = \"512MiB\"\n"
      "[workload]\nsynthetic = \"poisson\"\nrate = 50.0\n"
      "num_requests = 200\nprompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\n"
      "prefix_groups = 16\nprefix_tokens = 1024\n";
  const std::string disk = "kv_offloading_disk_size = \"4GiB\"\n"
                           "kv_offloading_disk_read_bandwidth = \"4GB/s\"\n"
                           "kv_offloading_disk_write_bandwidth = \"2GB/s\"\n";
  run::ServeAnswer host_only = run::prepare_serve(options(workload));
  run::simulate_serve(host_only, nullptr);
  run::ServeAnswer on = run::prepare_serve(options(disk + workload));
  REQUIRE(on.budget.kv_offload.disk_num_blocks == 2048);
  REQUIRE(on.budget.kv_offload.disk_bytes == GiB(4));
  REQUIRE(on.config.setup.replica.kv.num_disk_blocks == 2048);
  // budget --format json: the disk space, only with the disk tier.
  const nlohmann::ordered_json b = run::budget_json(on.budget);
  CHECK(b["kv_offload_disk_num_blocks"] == 2048);
  CHECK(b["kv_offload_disk_bytes"] == GiB(4).count());
  CHECK_FALSE(run::budget_json(host_only.budget).contains("kv_offload_disk_bytes"));
  run::simulate_serve(on, nullptr);

  const nlohmann::ordered_json j0 = run::serve_json(host_only);
  const nlohmann::ordered_json j = run::serve_json(on);
  CHECK_FALSE(j0.contains("kv_disk"));
  REQUIRE(j.contains("kv_disk"));
  const nlohmann::ordered_json& d = j["kv_disk"];
  const double gpu = d["gpu_prefix_hit_rate"].get<double>();
  const double cpu = d["cpu_prefix_hit_rate"].get<double>();
  const double dsk = d["disk_prefix_hit_rate"].get<double>();
  CHECK(dsk > 0.0);
  CHECK(gpu + cpu + dsk == Approx(j["prefix_hit_rate"].get<double>()));
  CHECK(d["gpu_hit_tokens"].get<std::int64_t>() + d["cpu_hit_tokens"].get<std::int64_t>() +
            d["disk_hit_tokens"].get<std::int64_t>() ==
        on.result.prefix_hit_tokens);
  CHECK(j["gpu_prefix_hit_rate"].get<double>() == gpu);
  CHECK(j["prefix_hit_rate"].get<double>() > j0["prefix_hit_rate"].get<double>());
  CHECK(d["disk_blocks_loaded"].get<std::int64_t>() * 16 == on.result.disk_hit_tokens);
  CHECK(d["disk_read_bytes"].get<std::int64_t>() ==
        on.result.num_blocks_disk_loaded * MiB(2).count());
  CHECK(d["disk_read_s"].get<double>() ==
        Approx(static_cast<double>(on.result.num_blocks_disk_loaded) * (1 << 21) / 4e9));
  CHECK(d["disk_write_s"].get<double>() ==
        Approx(static_cast<double>(on.result.num_blocks_disk_stored) * (1 << 21) / 2e9)
            .epsilon(1e-6));
  CHECK(d["read_bytes_per_s"].get<double>() == 4e9);
  // Write-through: the disk writes at least what host memory stores the first time.
  CHECK(on.result.num_blocks_disk_stored > 0);
  CHECK(on.result.num_blocks_disk_stored <= on.result.num_blocks_offload_stored);
}
