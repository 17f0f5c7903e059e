// `vramsim serve` with a disaggregated prefill/decode layout (--prefill-instances,
// --decode-instances and the per-pool settings).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace vramsim::testing {
namespace {

const std::string kBase =
    "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-requests 200 --seed 3 ";

TEST_CASE("serve 1P1D reports the pools, the KV transfers and the client's TTFT",
          "[cli][serve][disaggregated]") {
  const Run r = run(kBase + "--prefill-instances 1 --decode-instances 1 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["num_finished"] == 200);
  REQUIRE(j.contains("disaggregated"));
  const auto& d = j["disaggregated"];
  CHECK(d["prefill_instances"] == 1);
  CHECK(d["decode_instances"] == 1);
  CHECK(d["kv_transfer_num"] == 200);
  // Llama-3.1-8B in bf16: K and V x 32 layers x 8 KV heads x 128 dims x 2 bytes.
  CHECK(d["kv_transfer_bytes_per_token"] == 2 * 32 * 8 * 128 * 2);
  CHECK(d["kv_transfer_link"] == "intra-node");
  CHECK(d["kv_transfer_lanes"] == 1);
  CHECK(d["kv_transfer_p50_s"].get<double>() > 0.0);
  // The client's first token comes after the prefill instance's and the transfer.
  CHECK(j["ttft_p50_s"].get<double>() > d["prefill_ttft_p50_s"].get<double>());
  CHECK(d["prefill_utilization"].get<double>() > 0.0);
  CHECK(d["decode_utilization"].get<double>() > 0.0);
  CHECK(d["decode_kv_peak_blocks"].get<std::int64_t>() <=
        d["decode_kv_num_blocks"].get<std::int64_t>());
}

TEST_CASE("a decode TP of 2 moves the same KV bytes per token over two lanes",
          "[cli][serve][disaggregated]") {
  const Run r = run(kBase +
                    "--prefill-instances 1 --decode-instances 1 --decode-tp 2 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& d = j["disaggregated"];
  CHECK(d["decode_tp"] == 2);
  CHECK(d["prefill_tp"] == 1);
  CHECK(d["kv_transfer_bytes_per_token"] == 2 * 32 * 8 * 128 * 2);
  CHECK(d["kv_transfer_lanes"] == 1);  // min of the two TP degrees
}

TEST_CASE("the serve table names the layout and the KV link", "[cli][serve][disaggregated]") {
  const Run r = run(kBase + "--prefill-instances 2 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("disaggregated 2P1D") != std::string::npos);
  CHECK(r.out.find("KV transfer: intra-node link") != std::string::npos);
  CHECK(r.out.find("prefill-only TTFT") != std::string::npos);
  CHECK(r.out.find("200 arrived, 200 finished") != std::string::npos);
}

TEST_CASE("serve --out writes the disaggregated table with its units",
          "[cli][serve][disaggregated]") {
  const auto file = temp_dir() / "disaggregated.h5";
  std::filesystem::remove(file);
  const Run r = run(kBase + "--prefill-instances 1 --decode-instances 2 --out " + file.string());
  REQUIRE(r.exit_code == 0);
  const io::ResultsReader in(file);
  CHECK(in.read_int_column("/serve/disaggregated/prefill_instances") ==
        std::vector<std::int64_t>{1});
  CHECK(in.read_int_column("/serve/disaggregated/decode_instances") ==
        std::vector<std::int64_t>{2});
  CHECK(in.read_int_column("/serve/disaggregated/kv_transfer_num") ==
        std::vector<std::int64_t>{200});
  CHECK(in.read_double_column("/serve/disaggregated/kv_transfer_p99_s").front() > 0.0);
  CHECK(in.read_string_attribute("/serve/disaggregated", "kv_transfer_link") == "intra-node");
}

TEST_CASE("bad disaggregated layouts are refused naming the flag", "[cli][serve][disaggregated]") {
  Run r = run(kBase + "--prefill-instances 1 --decode-instances 0");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--decode-instances") != std::string::npos);

  r = run(kBase + "--prefill-instances 1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--decode-instances") != std::string::npos);

  r = run(kBase + "--decode-instances 2");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--prefill-instances") != std::string::npos);

  // 32 attention heads and 8 KV heads: TP 3 divides neither.
  r = run(kBase + "--prefill-instances 1 --decode-instances 1 --decode-tp 3");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--decode-tp") != std::string::npos);

  r = run(kBase + "--prefill-instances 1 --decode-instances 1 --replicas 2");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--replicas") != std::string::npos);

  r = run(kBase + "--prefill-instances 1 --decode-instances 1 --preemption swap");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--preemption") != std::string::npos);
}

// One request of 1000 prompt tokens: its KV, 1000 x 131,072 B = 131,072,000 B, crosses the link
// once, so the transfer's p50 is exactly latency + bytes / bandwidth (one lane at TP 1).
const std::string kOne =
    "serve --model meta-llama/Llama-3.1-8B --num-requests 1 --prompt-tokens fixed:1000 "
    "--output-tokens fixed:10 --seed 3 --format json ";

TEST_CASE("both pools inside the decode GPU's node sheet move the KV over its fabric",
          "[cli][serve][disaggregated]") {
  const Run r = run(kOne + "--gpu h100-sxm --prefill-instances 1 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  const auto d = nlohmann::json::parse(r.out)["disaggregated"];
  // topologies/nodes/h100-sxm-8x-nvswitch.toml: 8 GPUs, 450 GB/s per direction, 3.4 us.
  CHECK(d["kv_transfer_link"] == "intra-node");
  CHECK(d["kv_transfer_node"] == "h100-sxm-8x-nvswitch");
  CHECK(d["kv_transfer_node_gpus"] == 8);
  CHECK(d["kv_transfer_link_bytes_per_s"].get<double>() == Approx(450e9));
  CHECK(d["kv_transfer_link_latency_s"].get<double>() == Approx(3.4e-6));
  CHECK(d["kv_transfer_bytes"] == 131'072'000);
  CHECK(d["kv_transfer_p50_s"].get<double>() ==
        Approx(3.4e-6 + 131'072'000 / 450e9).epsilon(1e-6));
  CHECK(d["prefill_gpu"] == "h100-sxm");
  CHECK(d["decode_gpu"] == "h100-sxm");
  CHECK(d["kv_reserve_num_waited"] == 0);
  CHECK(d["kv_reserve_num_seat_waits"] == 0);
}

TEST_CASE("pools that outgrow the node, or sit on two GPU types, cross the network",
          "[cli][serve][disaggregated]") {
  // 4 prefill + 5 decode instances at TP 1: 9 GPUs > the node's 8. Hopper's default network:
  // one 400 Gb/s NIC per GPU (50 GB/s), 5 us.
  Run r = run(kOne + "--gpu h100-sxm --prefill-instances 4 --decode-instances 5");
  REQUIRE(r.exit_code == 0);
  auto d = nlohmann::json::parse(r.out)["disaggregated"];
  CHECK(d["kv_transfer_link"] == "inter-node");
  CHECK(d["kv_transfer_link_bytes_per_s"].get<double>() == Approx(50e9));
  CHECK(d["kv_transfer_p50_s"].get<double>() ==
        Approx(5e-6 + 131'072'000 / 50e9).epsilon(1e-6));

  // Prefill on H200, decode on H100: two node sheets, so the network; each pool sized on its
  // own device (the H200's 141 GB hold more KV blocks than the H100's 80 GB).
  r = run(kOne + "--gpu h100-sxm --prefill-gpu h200 --prefill-instances 1 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  d = nlohmann::json::parse(r.out)["disaggregated"];
  CHECK(d["prefill_gpu"] == "h200");
  CHECK(d["decode_gpu"] == "h100-sxm");
  CHECK(d["kv_transfer_link"] == "inter-node");
  CHECK(d["kv_transfer_p50_s"].get<double>() ==
        Approx(5e-6 + 131'072'000 / 50e9).epsilon(1e-6));
  CHECK(d["prefill_kv_num_blocks"].get<std::int64_t>() >
        d["decode_kv_num_blocks"].get<std::int64_t>());

  // The table names each pool's GPU.
  r = run("serve --model meta-llama/Llama-3.1-8B --num-requests 20 --gpu h100-sxm "
          "--decode-gpu h200 --prefill-instances 1 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("1 prefill x h100-sxm TP 1, 1 decode x h200 TP 1") != std::string::npos);
  CHECK(r.out.find("KV transfer: inter-node link") != std::string::npos);
}

TEST_CASE("a given topology sets the node the pools share and the network between nodes",
          "[cli][serve][disaggregated]") {
  // Two H100 PCIe cards on an NVLink bridge (300 GB/s, 3.4 us): 1P1D fits, 2P1D does not.
  Run r = run(kOne + "--gpu h100-pcie --topology h100-pcie-2x-nvlink-bridge "
                     "--prefill-instances 1 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  auto d = nlohmann::json::parse(r.out)["disaggregated"];
  CHECK(d["kv_transfer_link"] == "intra-node");
  CHECK(d["kv_transfer_p50_s"].get<double>() ==
        Approx(3.4e-6 + 131'072'000 / 300e9).epsilon(1e-6));

  // A cluster file: that node, and a 100 Gb/s network (12.5 GB/s) with 10 us.
  const auto file = temp_dir() / "pd_cluster.toml";
  {
    std::ofstream out(file);
    out << "node = \"h100-pcie-2x-nvlink-bridge\"\n[network]\nbandwidth_per_gpu = "
           "\"100Gbps\"\nlatency = \"10us\"\n";
  }
  r = run(kOne + "--gpu h100-pcie --topology " + file.string() +
          " --prefill-instances 2 --decode-instances 1");
  REQUIRE(r.exit_code == 0);
  d = nlohmann::json::parse(r.out)["disaggregated"];
  CHECK(d["kv_transfer_link"] == "inter-node");
  CHECK(d["kv_transfer_node_gpus"] == 2);
  CHECK(d["kv_transfer_p50_s"].get<double>() ==
        Approx(10e-6 + 131'072'000 / 12.5e9).epsilon(1e-6));
}

TEST_CASE("bad per-pool GPUs and topologies are refused naming the flag",
          "[cli][serve][disaggregated]") {
  Run r = run(kBase + "--prefill-instances 1 --decode-instances 1 --prefill-gpu h999");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--prefill-gpu") != std::string::npos);

  r = run(kBase + "--decode-gpu h200");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--prefill-instances") != std::string::npos);

  // The node holds H100 SXM only; an aggregated serve reads it too (for NVLS, as budget does:
  // serve_topology_cli_test.cpp) and refuses it alike.
  r = run(kBase + "--topology b200-8x-nvswitch");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("hardware.topology: node 'b200-8x-nvswitch' is built from b200 GPUs") !=
        std::string::npos);
  r = run(kBase + "--prefill-instances 1 --decode-instances 1 --topology b200-8x-nvswitch");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("hardware.topology: node 'b200-8x-nvswitch' is built from b200 GPUs") !=
        std::string::npos);
}

TEST_CASE("a scenario's disaggregated settings are read by serve and refused by compare serve",
          "[cli][serve][disaggregated]") {
  const auto file = temp_dir() / "pd_scenario.toml";
  {
    std::ofstream out(file);
    out << "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
           "[workload]\nnum_requests = 30\n[serving]\nprefill_instances = 1\n"
           "decode_instances = 2\nprefill_gpu = \"h200\"\ndecode_tp = 2\n";
  }
  Run r = run("serve " + file.string() + " --format json");
  REQUIRE(r.exit_code == 0);
  const auto d = nlohmann::json::parse(r.out)["disaggregated"];
  CHECK(d["prefill_instances"] == 1);
  CHECK(d["decode_instances"] == 2);
  CHECK(d["decode_tp"] == 2);
  CHECK(d["prefill_gpu"] == "h200");

  r = run("compare serve " + file.string() + " --num-gpus 2");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("serving.prefill_instances") != std::string::npos);
  CHECK(r.out.find("pd_scenario.toml") != std::string::npos);
}

TEST_CASE("plan serve refuses a fixed disaggregated layout, naming the flag and the search one",
          "[cli][plan][disaggregated]") {
  const Run r = run("plan serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm "
                    "--num-requests 50 --prefill-instances 1 --decode-instances 1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--prefill-instances: plan serve searches the layouts itself") !=
        std::string::npos);
  CHECK(r.out.find("--search-disaggregated") != std::string::npos);
}

TEST_CASE("plan serve --search-disaggregated shows the xPyD rows beside the replicas",
          "[cli][plan][disaggregated]") {
  const Run r = run("plan serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --tp 1 "
                    "--num-requests 100 --rate 4 --search-replicas 2 --search-disaggregated "
                    "--no-capacity --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["search"]["layouts"] == nlohmann::json::array({"2 replicas", "1P1D"}));
  CHECK(j["num_configs"] == 2);
  CHECK(j["num_simulated"] == 2);
}

}  // namespace
}  // namespace vramsim::testing
