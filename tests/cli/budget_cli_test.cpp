// End-to-end tests of the `vramsim` command: exit codes, JSON fields (DESIGN.md's contract),
// errors that name the file, line or field, and the HDF5 results file.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

TEST_CASE("the default scenario runs and answers in a table", "[cli][budget]") {
  const Run r = run("budget " + root() + "/scenarios/default.toml");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Maximum concurrency") != std::string::npos);
  CHECK(r.out.find("Fits: yes") != std::string::npos);
}

TEST_CASE("budget --format json prints every field DESIGN.md names", "[cli][budget]") {
  const Run r = run("budget --model meta-llama/llama-3.1-8b-instruct --gpu H100-SXM "
                    "--max-model-len 32768 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* field :
       {"num_params", "weights_bytes", "activation_peak_bytes", "non_torch_bytes",
        "cuda_graph_bytes", "kv_cache_bytes", "kv_bytes_per_token", "num_gpu_blocks",
        "kv_cache_tokens", "max_concurrency", "fits"}) {
    CHECK(j.contains(field));
    CHECK(j["devices"][0].contains(field));
  }
  CHECK(j["num_params"] == 8030261248LL);
  CHECK(j["kv_bytes_per_token"] == 131072);
  CHECK(j["fits"] == true);
}

TEST_CASE("budget --without-flashinfer samples by sorting on vLLM 0.10, and changes nothing on 0.19",
          "[cli][budget]") {
  const auto blocks = [](const std::string& flags) {
    const Run r = run("budget --model meta-llama/llama-3.1-8b-instruct --gpu H100-SXM "
                      "--max-model-len 8192 --format json " + flags);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["num_gpu_blocks"].get<long long>();
  };
  // FlashInfer's sampler holds 3.5 fp32 [R, V] buffers, the sort 9.5: fewer blocks without it.
  CHECK(blocks("--vllm-version 0.10.1 --without-flashinfer") < blocks("--vllm-version 0.10.1"));
  CHECK(blocks("--without-flashinfer") == blocks(""));
}

TEST_CASE("budget --without-gpu-p2p charges no communicator buffers at TP 2, and changes nothing "
          "at TP 1",
          "[cli][budget]") {
  const auto non_torch = [](const std::string& flags) {
    const Run r = run("budget --model meta-llama/llama-3.1-8b-instruct --gpu a100-sxm-80g "
                      "--max-model-len 8192 --format json " + flags);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["non_torch_bytes"].get<long long>();
  };
  // A100 NVLink: NCCL's plain buffers, 512 MiB (memory::default_overheads), over the 256 MiB
  // of one GPU; without peer access NCCL stages through host memory and vLLM's custom
  // all-reduce is off: the one-GPU figure is left.
  const long long mib = 1 << 20;
  CHECK(non_torch("--tp 2") == (256 + 512) * mib);
  CHECK(non_torch("--tp 2 --without-gpu-p2p") == 256 * mib);
  CHECK(non_torch("--without-gpu-p2p") == non_torch(""));
}

TEST_CASE("a model that does not fit answers fits: false, exit 0, and what would fit",
          "[cli][budget]") {
  const Run r = run("budget --model meta-llama/Llama-3.1-70B-Instruct --gpu h100-sxm "
                    "--max-model-len 8192 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fits"] == false);
  CHECK(j["shortfall_bytes"].get<std::int64_t>() > 0);
  REQUIRE_FALSE(j["fits_with_larger_tp"].empty());
  // 141 GB of bf16 weights: TP=2 leaves 65.7 GiB per H100; with vLLM 0.19's sampler peak
  // (about 2 GiB) and 2 GiB of non-torch memory, 0.9 x 79.2 GiB still holds one 8192-token
  // request (as Qwen2.5-72B at TP=2 runs on H100s in tests/validation/vllm_startup_logs.csv),
  // so TP=2 is the smallest that fits; one B200 or MI300X holds it whole.
  CHECK(j["fits_with_larger_tp"][0]["tp"] == 2);
  bool b200 = false;
  bool h200 = false;
  for (const auto& g : j["fits_on_other_gpus"]) {
    b200 = b200 || g["gpu"] == "b200";
    h200 = h200 || g["gpu"] == "h200";
  }
  CHECK(b200);
  CHECK_FALSE(h200);  // 0.9 x 139.8 GiB = 125.8 GiB < 131.4 GiB of weights
}

TEST_CASE("bad flags exit 2 and name the flag", "[cli][budget][errors]") {
  Run r = run("budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm --tp 3");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--tp") != std::string::npos);
  r = run("budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm --block-size 12");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--block-size") != std::string::npos);
  r = run("budget --model meta-llama/Llama-3.1-8B --gpu h100-sx");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("h100-sxm") != std::string::npos);  // the valid ids are listed
  r = run("budget --model no/such-model --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  r = run("budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm --quantization q9");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("awq") != std::string::npos);
  r = run("budget --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--model") != std::string::npos);
}

TEST_CASE("a bad value in a scenario file is reported at its file and line",
          "[cli][budget][errors]") {
  const auto file = temp_dir() / "bad.toml";
  {
    std::ofstream out(file);
    out << "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
           "[engine]\nblock_size = 24\n";
  }
  Run r = run("budget " + file.string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(file.string() + ":6") != std::string::npos);
  CHECK(r.out.find("engine.block_size") != std::string::npos);
  {
    std::ofstream out(file);
    out << "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[engine]\nblok_size = 16\n";
  }
  r = run("budget " + file.string() + " --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("blok_size") != std::string::npos);
}

TEST_CASE("budget --out writes a complete HDF5 file with units", "[cli][budget][io]") {
  const auto file = temp_dir() / "budget.h5";
  std::filesystem::remove(file);
  const Run r = run("budget " + root() + "/scenarios/default.toml --tp 2 --out " + file.string());
  REQUIRE(r.exit_code == 0);
  REQUIRE(std::filesystem::exists(file));
  vramsim::io::ResultsReader reader(file);
  const auto weights = reader.read_int_column("/budget/weights_bytes");
  CHECK(weights.size() == 2);
  CHECK(reader.read_units("/budget/weights_bytes") == "B");
  CHECK(reader.read_string_attribute("/", "created_by") == "vramsim budget");
  CHECK(reader.read_string_attribute("/", "scenario_text").find("Llama-3.1-8B") != std::string::npos);
  // No temporary file is left next to it.
  for (const auto& e : std::filesystem::directory_iterator(temp_dir())) {
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  }
}
