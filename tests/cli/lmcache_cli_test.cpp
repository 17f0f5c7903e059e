// `--kv-offloading-backend lmcache` and `--lmcache-config` from the command line, and a pasted
// vLLM command with `--kv-transfer-config '{"kv_connector":"LMCacheConnectorV1",...}'` (issue
// 16): budget's LMCache host memory per worker, the pasted connector read as the backend, other
// connectors and a bad LMCache file refused with exit 2.
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::testing::run;
using vramsim::testing::Run;

const std::string kModel = "meta-llama/Llama-3.1-8B";

std::string without_notes(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.rfind("note: ", 0) != 0) kept += line + "\n";
  }
  return kept;
}

nlohmann::json json_of(const Run& r) {
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(without_notes(r.out));
}

}  // namespace

TEST_CASE("budget --kv-offloading-backend lmcache pins max_local_cpu_size on every worker",
          "[cli][kv][offload][lmcache]") {
  // TP 2, 8 GiB: vLLM gives each rank 4 GiB (kv_gb_per_rank); 16 MiB per 256-token chunk.
  const nlohmann::json j = json_of(run("budget " + kModel + " --gpu h100-sxm --tp 2 "
                                       "--kv-offloading-backend lmcache --kv-offloading-size "
                                       "8GiB --format json"));
  CHECK(j["kv_offload_backend"] == "lmcache");
  CHECK(j["lmcache_chunk_size"] == 256);
  CHECK(j["lmcache_num_workers"] == 2);
  CHECK(j["lmcache_host_bytes_per_worker"] == std::int64_t{4} << 30);
  CHECK(j["kv_offload_host_bytes"] == std::int64_t{8} << 30);
  CHECK(j["kv_offload_num_blocks"] == 256 * 16);
  const Run table = run("budget " + kModel + " --gpu h100-sxm --tp 2 --kv-offloading-backend "
                        "lmcache --kv-offloading-size 8GiB");
  INFO(table.out);
  CHECK(table.out.find("LMCache: 2 worker(s) x 4.00 GiB of pinned host memory each "
                       "(max_local_cpu_size), chunks of 256 tokens (16 blocks): 256 chunks") !=
        std::string::npos);
}

TEST_CASE("a pasted LMCacheConnectorV1 reads as --kv-offloading-backend lmcache, and other "
          "connectors are refused",
          "[cli][kv][offload][lmcache][vllm-command]") {
  const nlohmann::json flags = json_of(run("budget " + kModel + " --gpu h100-sxm --tp 2 "
                                           "--kv-offloading-backend lmcache --format json"));
  // LMCache's default: 5.0 GiB per worker.
  CHECK(flags["lmcache_host_bytes_per_worker"] == std::int64_t{5} << 30);
  const Run pasted = run("budget --gpu h100-sxm --format json -- vllm serve " + kModel +
                         " -tp 2 --kv-transfer-config "
                         "'{\"kv_connector\":\"LMCacheConnectorV1\",\"kv_role\":\"kv_both\"}'");
  CHECK(json_of(pasted) == flags);
  CHECK(pasted.out.find("--kv-offloading-backend lmcache") != std::string::npos);

  const Run nixl = run("budget --gpu h100-sxm -- vllm serve " + kModel +
                       " --kv-transfer-config "
                       "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'");
  INFO(nixl.out);
  CHECK(nixl.exit_code == 2);
  CHECK(nixl.out.find("other KV connectors (disaggregated prefill/decode, NIXL, ...) are not") !=
        std::string::npos);
  const Run producer = run("budget --gpu h100-sxm -- vllm serve " + kModel +
                           " --kv-transfer-config '{\"kv_connector\":\"LMCacheConnectorV1\","
                           "\"kv_role\":\"kv_producer\"}'");
  CHECK(producer.exit_code == 2);
}

TEST_CASE("a bad key in an --lmcache-config file exits 2 naming its file and line",
          "[cli][kv][offload][lmcache]") {
  const auto path = vramsim::testing::temp_dir() / "lmcache_bad.yaml";
  std::ofstream(path) << "chunk_size: 256\nlocal_cpu: true\nremote_url: \"lm://host:65432\"\n";
  const Run r = run("budget " + kModel + " --gpu h100-sxm --kv-offloading-backend lmcache "
                    "--lmcache-config " + path.string());
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(path.string() + ":3") != std::string::npos);
  CHECK(r.out.find("remote_url: a remote KV store is not modelled") != std::string::npos);
  const Run native = run("budget " + kModel + " --gpu h100-sxm --lmcache-config " +
                         path.string());
  CHECK(native.exit_code == 2);
  CHECK(native.out.find("give --kv-offloading-backend lmcache too") != std::string::npos);
}
