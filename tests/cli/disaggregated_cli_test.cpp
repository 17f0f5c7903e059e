// `vramsim serve` with a disaggregated prefill/decode layout (--prefill-instances,
// --decode-instances and the per-pool settings).
#include <nlohmann/json.hpp>

#include <filesystem>
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
}

TEST_CASE("plan serve refuses a disaggregated layout it does not search yet, naming the flag",
          "[cli][plan][disaggregated]") {
  const Run r = run("plan serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm "
                    "--num-requests 50 --prefill-instances 1 --decode-instances 1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--prefill-instances: plan serve searches aggregated layouts") !=
        std::string::npos);
}

}  // namespace
}  // namespace vramsim::testing
