// `vramsim serve --topology NODE|FILE` (issue 16): serve reads the node the GPUs sit in as
// `budget --topology` does (BudgetRequest::topology), so the node's fabric decides NCCL's NVLS
// buffers, hence the non-torch memory and the KV blocks, for aggregated and disaggregated runs
// alike, and both commands agree on them for the same node.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "sim/core/units.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace vramsim::testing {
namespace {

const std::string kModel =
    "--model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --gpu h100-sxm --tp 2 ";

nlohmann::json json_of(const std::string& command) {
  const Run r = run(command + " --format json");
  INFO(command << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

TEST_CASE("serve --topology takes NVLS from the node's fabric, as budget does",
          "[cli][serve][topology]") {
  // Llama-3.1-8B at TP 2: 4 KV heads x 128 x 2 (K, V) x 2 B x 32 layers = 64 KiB per token
  // per device, 1 MiB per 16-token block. On an NVSwitch H100 node NCCL's NVLS buffers make
  // the communicator 1833 MiB; on a PCIe node (pcie-2x) there are none and it is 512 MiB
  // (memory::default_overheads): 1321 MiB more for KV, 1321 more blocks. budget gives 61,278
  // blocks with NVLS and 62,599 on pcie-2x (non-torch 2.04 GiB and 768 MiB; the weights
  // include 2 MiB of the caching allocator's rounding: embed_tokens and lm_head hold 501 MiB
  // each in 502 MiB blocks).
  const std::string serve = "serve " + kModel + "--num-requests 2 --seed 3 ";
  const std::string budget = "budget " + kModel + "--no-suggestions ";
  const nlohmann::json plain = json_of(serve);
  const nlohmann::json pcie = json_of(serve + "--topology pcie-2x");
  const nlohmann::json budget_pcie = json_of(budget + "--topology pcie-2x");
  CHECK(plain["inputs"]["num_gpu_blocks"] == 61'278);
  CHECK(plain["inputs"]["nvls"] == true);
  CHECK(plain["inputs"]["nvls_from"] == "device sheet h100-sxm");
  CHECK_FALSE(plain["inputs"].contains("topology_node"));
  CHECK(pcie["inputs"]["num_gpu_blocks"] == 62'599);
  CHECK(pcie["inputs"]["num_gpu_blocks"].get<std::int64_t>() -
            plain["inputs"]["num_gpu_blocks"].get<std::int64_t>() ==
        1833 - 512);
  CHECK(pcie["inputs"]["non_torch_bytes"] == MiB(768).count());
  CHECK(pcie["inputs"]["nvls"] == false);
  CHECK(pcie["inputs"]["nvls_from"] == "node sheet pcie-2x");
  CHECK(pcie["inputs"]["topology_node"] == "pcie-2x");
  // budget on the same node: the same blocks, non-torch memory and NVLS answer.
  CHECK(budget_pcie["num_gpu_blocks"] == pcie["inputs"]["num_gpu_blocks"]);
  CHECK(budget_pcie["non_torch_bytes"] == pcie["inputs"]["non_torch_bytes"]);
  CHECK(budget_pcie["nvls_from"] == pcie["inputs"]["nvls_from"]);
  // The NVSwitch node the device sheet describes changes nothing.
  const nlohmann::json nvswitch = json_of(serve + "--topology h100-sxm-8x-nvswitch");
  CHECK(nvswitch["inputs"]["num_gpu_blocks"] == plain["inputs"]["num_gpu_blocks"]);
  CHECK(nvswitch["inputs"]["nvls_from"] == "node sheet h100-sxm-8x-nvswitch");
}

TEST_CASE("serve --topology sizes a disaggregated decode pool by the node too",
          "[cli][serve][topology][disaggregated]") {
  // 1P1D at TP 2 on pcie-2x: 4 GPUs on a 2-GPU node, so the KV link goes over the network,
  // but each instance's GPUs are the node's: both pools take its NVLS answer (none).
  const nlohmann::json j = json_of("serve " + kModel + "--num-requests 2 --seed 3 "
                                   "--topology pcie-2x --prefill-instances 1 "
                                   "--decode-instances 1");
  CHECK(j["inputs"]["num_gpu_blocks"] == 62'599);
  CHECK(j["disaggregated"]["prefill_kv_num_blocks"] == 62'599);
  CHECK(j["inputs"]["nvls_from"] == "node sheet pcie-2x");
  CHECK(j["disaggregated"]["kv_transfer_link"] == "inter-node");
}

TEST_CASE("serve refuses an instance larger than the node, as budget does",
          "[cli][serve][topology]") {
  const Run r = run("serve " + kModel + "--pp 2 --num-requests 2 --topology pcie-2x");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("node 'pcie-2x' holds 2 GPUs, fewer than the 4 this budget runs on (TP 2 x "
                   "PP 2 x DP 1)") != std::string::npos);
}

TEST_CASE("plan serve --topology searches an aggregated base on the node, sizing each row by it",
          "[cli][plan][serve][topology]") {
  // Refused before ("serve reads the topology for the KV link of a disaggregated layout
  // only"). Now each row's engine sits in the node: a TP 2 row on pcie-2x has its 62,599 KV
  // blocks (no NVLS), and a TP 4 row, more GPUs than the node holds, is skipped as invalid
  // (budget's refusal) while the search goes on.
  const std::string plan = "plan serve --model meta-llama/Llama-3.1-8B-Instruct --max-model-len "
                           "8192 --gpu h100-sxm --num-requests 20 --seed 3 --search-tp 2,4 ";
  const nlohmann::json without = json_of(plan);
  const nlohmann::json j = json_of(plan + "--topology pcie-2x");
  CHECK(without["num_skipped_invalid"] == 0);
  CHECK(without["cheapest"][0]["num_gpu_blocks"] == 61'278);
  REQUIRE(j["cheapest"].size() >= 1);
  CHECK(j["cheapest"][0]["tp"] == 2);
  CHECK(j["cheapest"][0]["num_gpu_blocks"] == 62'599);
  // Half the rows are TP 4.
  CHECK(j["num_configs"] == without["num_configs"]);
  CHECK(j["num_skipped_invalid"].get<std::int64_t>() * 2 == j["num_configs"].get<std::int64_t>());
  const Run table = run(plan + "--topology pcie-2x");
  INFO(table.out);
  CHECK(table.exit_code == 0);
}

}  // namespace
}  // namespace vramsim::testing
