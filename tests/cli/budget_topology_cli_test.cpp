// `vramsim budget --topology NODE|FILE` (issue 16): the node sheet the GPUs sit in supplies the
// host memory the KV offload tier is checked against and decides NCCL's NVLS buffers for
// TP > 1; a node of another GPU is refused as serve refuses it, and one with fewer GPUs than
// the budget's TP x PP x DP is refused too.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/units.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace vramsim::testing {
namespace {

// Llama-3.1-8B: 128 KiB of bf16 KV per token, so a 16-token block is 2 MiB and every tier
// below is whole blocks.
const std::string kBudget =
    "budget --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --no-suggestions ";

nlohmann::json budget_json(const std::string& flags) {
  const Run r = run(kBudget + flags + " --format json");
  INFO(flags << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// The line of `out` holding `needle` ("" when none).
std::string line_with(const std::string& out, const std::string& needle) {
  const std::size_t at = out.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t begin = out.rfind('\n', at);
  const std::size_t end = out.find('\n', at);
  return out.substr(begin == std::string::npos ? 0 : begin + 1,
                    end == std::string::npos ? std::string::npos
                                             : end - (begin == std::string::npos ? 0 : begin + 1));
}

// An eight-GPU PCIe node sheet of `host` host memory, written to the test folder.
std::filesystem::path small_host_node(const std::string& host) {
  const std::filesystem::path file = temp_dir() / "budget-topology-box-8x.toml";
  std::ofstream(file) << "id = \"budget-topology-box-8x\"\n"
                         "description = \"eight GPUs on PCIe, a small host\"\nnum_gpus = 8\n"
                         "host_memory = \"" << host << "\"\nsources = [\"a test's own node\"]\n"
                         "[fabric]\nkind = \"pcie\"\nlatency = \"5.7us\"\n";
  return file;
}

TEST_CASE("budget --topology takes a shipped node id and says which node it read",
          "[cli][budget][topology]") {
  const nlohmann::json with = budget_json("--gpu h100-sxm --tp 2 --topology h100-sxm-8x-nvswitch");
  CHECK(with["topology_node"] == "h100-sxm-8x-nvswitch");
  CHECK(with["topology_node_num_gpus"] == 8);
  CHECK(with["topology_node_fabric"] == "nvswitch");
  CHECK(with["topology_node_file"].get<std::string>().find(
            "topologies/nodes/h100-sxm-8x-nvswitch.toml") != std::string::npos);
  CHECK(with["nvls"] == true);
  CHECK(with["nvls_from"] == "node sheet h100-sxm-8x-nvswitch");
  // Without it: the device sheet decides NVLS (the same answer for an H100 SXM), and no node.
  const nlohmann::json without = budget_json("--gpu h100-sxm --tp 2");
  CHECK_FALSE(without.contains("topology_node"));
  CHECK(without["nvls"] == true);
  CHECK(without["nvls_from"] == "device sheet h100-sxm");
  CHECK(without["num_gpu_blocks"] == with["num_gpu_blocks"]);
  // The table names the node.
  const Run t = run(kBudget + "--gpu h100-sxm --tp 2 --topology h100-sxm-8x-nvswitch");
  INFO(t.out);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("node h100-sxm-8x-nvswitch (--topology): 8 GPUs on nvswitch, NCCL NVLS "
                   "buffers yes") != std::string::npos);
}

TEST_CASE("budget --topology FILE holds the KV offload tier to that node's host memory, and "
          "the JSON says where the figure came from",
          "[cli][budget][topology][kv][offload]") {
  const std::filesystem::path file = small_host_node("256GiB");
  // 300 GiB: within the DGX H100's 2 TiB (the h100-sxm default), above the 256 GiB of the file.
  const nlohmann::json def = budget_json("--gpu h100-sxm --kv-offloading-size 300GiB");
  CHECK(def["kv_offload_node"] == "h100-sxm-8x-nvswitch");
  CHECK(def["kv_offload_node_from_topology"] == false);
  CHECK(def["kv_offload_fits_host_memory"] == true);
  const nlohmann::json j =
      budget_json("--gpu h100-sxm --kv-offloading-size 300GiB --topology " + file.string());
  CHECK(j["kv_offload_node"] == "budget-topology-box-8x");
  CHECK(j["kv_offload_node_file"] == file.string());
  CHECK(j["kv_offload_node_from_topology"] == true);
  CHECK(j["kv_offload_node_host_memory_bytes"] == GiB(256).count());
  CHECK(j["kv_offload_host_bytes_per_node"] == GiB(300).count());
  CHECK(j["kv_offload_fits_host_memory"] == false);
  CHECK(j["topology_node_file"] == file.string());
  // The GPU's answer does not move (TP 1: no communicator buffers to charge).
  CHECK(j["fits"] == true);
  CHECK(j["num_gpu_blocks"] == def["num_gpu_blocks"]);

  // The table warns, naming the flag and the node sheet; the exit stays 0.
  const Run r =
      run(kBudget + "--gpu h100-sxm --kv-offloading-size 300GiB --topology " + file.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("WARNING: engine.kv_offloading_size (--kv-offloading-size): 1 engine(s) pin "
                   "300.00 GiB of host memory, more than the 256.00 GiB host_memory of node "
                   "sheet budget-topology-box-8x (--topology)") != std::string::npos);
}

TEST_CASE("NVLS buffers follow the node sheet: an H100 SXM on PCIe has none",
          "[cli][budget][topology]") {
  const nlohmann::json nvswitch = budget_json("--gpu h100-sxm --tp 2");
  const nlohmann::json pcie = budget_json("--gpu h100-sxm --tp 2 --topology pcie-2x");
  CHECK(pcie["nvls"] == false);
  CHECK(pcie["nvls_from"] == "node sheet pcie-2x");
  // memory::default_overheads: 1833 MiB of communicator buffers with NVLS, 512 MiB without.
  CHECK(nvswitch["non_torch_bytes"].get<std::int64_t>() -
            pcie["non_torch_bytes"].get<std::int64_t>() ==
        MiB(1833 - 512).count());
  CHECK(pcie["num_gpu_blocks"].get<std::int64_t>() >
        nvswitch["num_gpu_blocks"].get<std::int64_t>());
  // An A100 NVSwitch node (third-generation NVLink) has none either, as its device sheet says.
  const nlohmann::json a100 =
      budget_json("--gpu a100-sxm-80g --tp 2 --topology a100-sxm-80g-8x-nvswitch");
  CHECK(a100["nvls"] == false);
  CHECK(budget_json("--gpu a100-sxm-80g --tp 2")["non_torch_bytes"] == a100["non_torch_bytes"]);
}

TEST_CASE("budget refuses a node built from another GPU with serve's own message",
          "[cli][budget][topology]") {
  const Run b = run(kBudget + "--gpu a100-sxm-80g --topology h100-sxm-8x-nvswitch");
  INFO(b.out);
  CHECK(b.exit_code == 2);
  const std::string budget_error = line_with(b.out, "is built from");
  CHECK(budget_error.find("node 'h100-sxm-8x-nvswitch' is built from h100-sxm GPUs, not "
                          "a100-sxm-80g") != std::string::npos);
  CHECK(budget_error.find("hardware.topology: ") != std::string::npos);
  // serve (which reads the node for its budget, and for a disaggregated layout's KV link too)
  // refuses the same pair with the same line.
  const Run s = run("serve --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 "
                    "--gpu a100-sxm-80g --topology h100-sxm-8x-nvswitch --prefill-instances 1 "
                    "--decode-instances 1 --num-requests 2");
  INFO(s.out);
  CHECK(s.exit_code == 2);
  CHECK(line_with(s.out, "is built from") == budget_error);
}

TEST_CASE("budget refuses a node with fewer GPUs than TP x PP x DP, naming the flag",
          "[cli][budget][topology]") {
  const Run r = run(kBudget + "--gpu h100-sxm --tp 2 --pp 2 --topology pcie-2x");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--topology") != std::string::npos);
  CHECK(r.out.find("node 'pcie-2x' holds 2 GPUs, fewer than the 4 this budget runs on (TP 2 x "
                   "PP 2 x DP 1)") != std::string::npos);
  // An unknown id lists the valid ones.
  const Run u = run(kBudget + "--gpu h100-sxm --topology h100-16x");
  CHECK(u.exit_code == 2);
  CHECK(u.out.find("h100-sxm-8x-nvswitch") != std::string::npos);
}

}  // namespace
}  // namespace vramsim::testing
