// `--kv-offloading-backend lmcache` and `--lmcache-config FILE` (run/lmcache_config.hpp): the
// host memory budget reports per LMCache worker, the chunks its tier holds, and the YAML file's
// bad input refused at its file and line.
#include "sim/run/lmcache_config.hpp"

#include "sim/core/error.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"

#include <filesystem>
#include <fstream>
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

run::BudgetAnswer budget_of(const std::string& extra) {
  const run::ServeOptions o = options(extra);
  return run::answer_budget(o, run::budget_request(o));
}

/// Writes `text` to a file of the test's own and returns its path.
std::string write_yaml(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vramsim_lmcache_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

/// Every problem of parsing `text` as "file:line | message", joined by "\n".
std::string problems_of(const std::string& text) {
  try {
    (void)run::parse_lmcache_config(text, "lmcache.yaml");
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) {
      if (!out.empty()) out += "\n";
      CHECK(p.field == "engine.lmcache_config");
      out += p.where.file + ":" + std::to_string(p.where.line) + " | " + p.message;
    }
    return out;
  }
  return "no error";
}

}  // namespace

TEST_CASE("budget gives each LMCache worker max_local_cpu_size of pinned memory and counts the "
          "whole chunks it holds",
          "[run][kv][offload][lmcache]") {
  // Llama-3.1-8B, bf16 KV: 131,072 B per token on one GPU, 65,536 B on each of 2 TP ranks; a
  // chunk of 256 tokens is 16 MiB per rank at TP 2.
  SECTION("--kv-offloading-size 8GiB at TP 2: 4 GiB per worker, as vLLM's kv_gb_per_rank") {
    const run::BudgetAnswer b =
        budget_of("tp = 2\nkv_offloading_backend = \"lmcache\"\nkv_offloading_size = \"8GiB\"\n");
    CHECK(b.kv_offload.backend == serving::KvOffloadBackend::kLmcache);
    CHECK(b.kv_offload.num_workers == 2);
    CHECK(b.kv_offload.host_bytes_per_worker == GiB(4));
    CHECK(b.kv_offload.host_bytes == GiB(8));
    CHECK(b.kv_offload.chunk_size == 256);
    CHECK(b.kv_offload.chunk_blocks == 16);
    CHECK(b.kv_offload.num_blocks == 256 * 16);  // 4 GiB / 16 MiB = 256 chunks
    CHECK(b.kv_offload.bytes_per_block == MiB(2));
  }
  SECTION("no size: LMCache's default 5.0 GiB per worker") {
    const run::BudgetAnswer b = budget_of("tp = 2\nkv_offloading_backend = \"lmcache\"\n");
    CHECK(b.kv_offload.host_bytes_per_worker == GiB(5));
    CHECK(b.kv_offload.host_bytes == GiB(10));
    CHECK(b.kv_offload.num_blocks == 320 * 16);
  }
  SECTION("the file's chunk_size and max_local_cpu_size") {
    const std::string file =
        write_yaml("sizes.yaml", "chunk_size: 512\nmax_local_cpu_size: 2.5\n");
    const run::BudgetAnswer b = budget_of("tp = 2\nkv_offloading_backend = \"lmcache\"\n"
                                          "lmcache_config = \"" + file + "\"\n");
    // 2.5 GiB per worker / 32 MiB per 512-token chunk = 80 chunks of 32 blocks.
    CHECK(b.kv_offload.host_bytes_per_worker == MiB(2560));
    CHECK(b.kv_offload.chunk_blocks == 32);
    CHECK(b.kv_offload.num_blocks == 80 * 32);
    CHECK(b.kv_offload.host_bytes == MiB(5120));
    // vLLM's --kv-offloading-size replaces the file's max_local_cpu_size.
    const run::BudgetAnswer sized =
        budget_of("tp = 2\nkv_offloading_backend = \"lmcache\"\nkv_offloading_size = \"2GiB\"\n"
                  "lmcache_config = \"" + file + "\"\n");
    CHECK(sized.kv_offload.host_bytes_per_worker == GiB(1));
    CHECK(sized.kv_offload.num_blocks == 32 * 32);
  }
  SECTION("the file's local disk, in whole chunks per worker") {
    const std::string file = write_yaml(
        "disk.yaml", "local_disk: \"file:///mnt/lmcache/\"\nmax_local_disk_size: 1\n");
    const run::BudgetAnswer b = budget_of("kv_offloading_backend = \"lmcache\"\n"
                                          "lmcache_config = \"" + file + "\"\n");
    // TP 1: a chunk is 32 MiB; 1 GiB of disk holds 32 of them.
    CHECK(b.kv_offload.disk_num_blocks == 32 * 16);
    CHECK(b.kv_offload.disk_bytes == GiB(1));
  }
}

TEST_CASE("LMCache's YAML: flat keys read, BOM and CRLF accepted, the rest refused at its line",
          "[run][kv][offload][lmcache]") {
  const run::LmcacheSettings s = run::parse_lmcache_config(
      "\xEF\xBB\xBF# LMCache\r\nchunk_size: 128\r\nlocal_cpu: True\r\nmax_local_cpu_size: 20.0 "
      "# GiB\r\nlocal_disk: null\r\nsave_unfull_chunk: false\r\ncache_policy: \"LRU\"\r\n",
      "a.yaml");
  CHECK(s.chunk_size == 128);
  CHECK(s.max_local_cpu_size == 20.0);
  CHECK(!s.local_disk);

  CHECK(problems_of("chunk_size: 256\nremote_serde: naive\n") ==
        "lmcache.yaml:2 | remote_serde is not read by vramsim: only chunk_size, local_cpu, "
        "max_local_cpu_size, local_disk, max_local_disk_size and LMCache's defaults of "
        "save_unfull_chunk, use_layerwise, save_decode_cache, enable_async_loading, "
        "enable_blending, enable_p2p, enable_pd, cache_policy, remote_url are; remove it from a "
        "copy of the file to simulate without it");
  CHECK(problems_of("chunk_size: big\n") ==
        "lmcache.yaml:1 | chunk_size must be a positive whole number of tokens, got 'big'");
  CHECK(problems_of("\n\nmax_local_cpu_size: -1\n") ==
        "lmcache.yaml:3 | max_local_cpu_size must be a positive number of GiB per worker "
        "(LMCache reads it as GiB: size * 1024**3 bytes), got '-1'");
  CHECK(problems_of("use_layerwise: true\n") ==
        "lmcache.yaml:1 | use_layerwise: layer-by-layer store and retrieve, overlapped with the "
        "forward, is not modelled (false is LMCache's default, the only value modelled), got "
        "'true'");
  CHECK(problems_of("save_unfull_chunk: True\n").rfind("lmcache.yaml:1 | save_unfull_chunk: ", 0)
        == 0);
  CHECK(problems_of("extra_config:\n  foo: 1\n") ==
        "lmcache.yaml:1 | extra_config is not read by vramsim: only chunk_size, local_cpu, "
        "max_local_cpu_size, local_disk, max_local_disk_size and LMCache's defaults of "
        "save_unfull_chunk, use_layerwise, save_decode_cache, enable_async_loading, "
        "enable_blending, enable_p2p, enable_pd, cache_policy, remote_url are; remove it from a "
        "copy of the file to simulate without it\n"
        "lmcache.yaml:2 | an indented line (nested YAML) is not read: LMCache's settings are "
        "flat `key: value` lines");
  CHECK(problems_of("chunk_size: 256\nchunk_size: 512\n") ==
        "lmcache.yaml:2 | chunk_size is given twice");
  CHECK(problems_of("chunk_size: [256]\n").rfind("lmcache.yaml:1 | chunk_size: '[256]' is YAML "
                                                 "beyond a plain `key: value`",
                                                 0) == 0);
}

TEST_CASE("bad LMCache settings of a scenario are refused naming the field",
          "[run][kv][offload][lmcache]") {
  const auto problem_of = [](const std::string& extra) -> std::string {
    try {
      (void)run::prepare_serve(options(extra));
    } catch (const ConfigError& e) {
      const Problem& p = e.report().problems().front();
      return p.field + " | " + p.message;
    }
    return "no error";
  };
  CHECK(problem_of("lmcache_config = \"x.yaml\"\n") ==
        "engine.lmcache_config | is LMCache's configuration: give --kv-offloading-backend "
        "lmcache too");
  const std::string odd = write_yaml("odd.yaml", "chunk_size: 100\n");
  CHECK(problem_of("kv_offloading_backend = \"lmcache\"\nlmcache_config = \"" + odd + "\"\n") ==
        "engine.lmcache_config | chunk_size 100 is not a whole number of vLLM blocks of 16 "
        "tokens: vramsim keys LMCache's chunks by whole blocks");
  CHECK(problem_of("kv_offloading_backend = \"lmcache\"\n[serving]\n"
                   "enable_prefix_caching = false\n") ==
        "engine.kv_offloading_backend | needs serving.enable_prefix_caching "
        "(--enable-prefix-caching): the offload tier is looked up by prefix block hashes");
}

TEST_CASE("serve with LMCache reports the CPU tier's hits in whole chunks and its copies",
          "[run][kv][offload][lmcache]") {
  // kv_offload_settings_test.cpp's workload: 8 groups sharing 1024-token prefixes (4 whole
  // chunks of 256), 1,100-token prompts, a GPU cache cut to 300 blocks.
  const std::string workload =
      "num_gpu_blocks = 300\n[workload]\nsynthetic = \"poisson\"\nrate = 50.0\n"
      "num_requests = 200\nprompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\n"
      "prefix_groups = 8\nprefix_tokens = 1024\n";
  run::ServeAnswer native =
      run::prepare_serve(options("kv_offloading_size = \"4GiB\"\n" + workload));
  run::simulate_serve(native, nullptr);
  run::ServeAnswer lm = run::prepare_serve(
      options("kv_offloading_backend = \"lmcache\"\nkv_offloading_size = \"4GiB\"\n" + workload));
  // 4 GiB / 32 MiB per chunk = 128 chunks = 2048 blocks, as native's 2048 blocks of 2 MiB.
  REQUIRE(lm.config.setup.replica.kv.num_offload_blocks == 2048);
  run::simulate_serve(lm, nullptr);
  const nlohmann::ordered_json j = run::serve_json(lm);
  CHECK(j["cpu_prefix_hit_rate"].get<double>() > 0.0);
  CHECK(j["gpu_prefix_hit_rate"].get<double>() + j["cpu_prefix_hit_rate"].get<double>() ==
        Approx(j["prefix_hit_rate"].get<double>()));
  // Loads are whole chunks (16 blocks), stores too; a request's 1,100 tokens store 4 chunks
  // at most (decode and the last 76 tokens never).
  CHECK(lm.result.num_blocks_offload_loaded % 16 == 0);
  CHECK(lm.result.num_blocks_offload_stored % 16 == 0);
  CHECK(lm.result.num_blocks_offload_stored <= 200 * 64);
  CHECK(j["kv_offload_h2d_bytes"].get<std::int64_t>() ==
        lm.result.num_blocks_offload_loaded * MiB(2).count());
  // Native stores every full block (68 per request at most), LMCache only whole prompt chunks.
  CHECK(lm.result.num_blocks_offload_stored < native.result.num_blocks_offload_stored);
}
