// End-to-end tests of `vramsim train`: the JSON contract of DESIGN.md, the scenario files,
// the HDF5 timelines, the micro-batch sweep and the exit code for bad input.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
};

Run run(const std::string& args, bool with_stderr = true) {
  const std::string cmd =
      std::string(VRAMSIM_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string root() { return VRAMSIM_SOURCE_ROOT; }

}  // namespace

TEST_CASE("train --format json prints every field DESIGN.md names, per device", "[cli][training]") {
  const Run r = run("train " + root() +
                        "/scenarios/training/llama-3.1-70b-tp8-pp8-64xh100.toml "
                        "--format json",
                    false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["devices"].size() == 8);
  for (const char* field : {"peak_allocated_bytes", "peak_reserved_bytes", "model_state_bytes",
                            "activation_bytes", "step_time_s", "fits"}) {
    CHECK(j.contains(field));
    for (const auto& d : j["devices"]) CHECK(d.contains(field));
  }
  CHECK(j["fits"] == true);
  CHECK(j["devices"][0]["activation_bytes"] > j["devices"][7]["activation_bytes"]);
  for (const auto& d : j["devices"]) {
    CHECK(d["peak_allocated_bytes"].get<std::int64_t>() <=
          d["peak_reserved_bytes"].get<std::int64_t>());
  }
}

TEST_CASE("a plan that does not fit answers fits: false and exits 0", "[cli][training]") {
  const Run r =
      run("train --model meta-llama/Llama-3.1-70B --gpu h100-sxm --num-gpus 8 "
          "--strategy ddp --format json",
          false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fits"] == false);
  CHECK(j["shortfall_bytes"].get<std::int64_t>() > 0);
}

TEST_CASE("a bad flag value exits 2 and names the flag", "[cli][training]") {
  const Run r = run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --strategy zero4");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--strategy") != std::string::npos);
  const Run tp = run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-gpus 12 --tp 8");
  CHECK(tp.exit_code == 2);
  CHECK(tp.out.find("--num-gpus") != std::string::npos);
  CHECK(run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --no-such-flag").exit_code == 2);
}

TEST_CASE("the micro-batch sweep lets full checkpointing fit the largest micro-batch",
          "[cli][training]") {
  const Run r = run("train " + root() +
                        "/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml "
                        "--find-max-micro-batch --format json",
                    false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["max_micro_batch"].size() == 4);
  CHECK(j["max_micro_batch"][3]["checkpointing"] == "full");
  CHECK(j["max_micro_batch"][3]["max_micro_batch"].get<int>() >=
        j["max_micro_batch"][0]["max_micro_batch"].get<int>());
}

TEST_CASE("train --out writes the memory and op timelines", "[cli][training]") {
  const auto file = std::filesystem::temp_directory_path() / "vramsim_train_cli_test.h5";
  std::filesystem::remove(file);
  const Run r = run("train " + root() +
                    "/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml "
                    "--out " +
                    file.string());
  REQUIRE(r.exit_code == 0);
  vramsim::io::ResultsReader reader(file);
  CHECK(reader.read_string_attribute("/", "created_by") == "vramsim train");
  // The resolved settings, each with its origin (sim/run/train_options.hpp).
  const auto inputs = nlohmann::json::parse(reader.read_string_attribute("/", "inputs"));
  const auto& settings = inputs.at("settings");
  CHECK(settings.at("batch.micro_batch").at("value") == 2);
  CHECK(settings.at("batch.micro_batch").at("origin") == "scenario");
  CHECK(settings.at("batch.micro_batch").at("source").get<std::string>().ends_with(".toml:14"));
  CHECK(settings.at("parallel.tp").at("origin") == "default");
  const auto time = reader.read_int_column("/train/memory_timeline/time_ns");
  const auto alloc = reader.read_int_column("/train/memory_timeline/allocated_bytes");
  const auto reserved = reader.read_int_column("/train/memory_timeline/reserved_bytes");
  REQUIRE(!time.empty());
  for (std::size_t i = 0; i < alloc.size(); ++i) REQUIRE(alloc[i] <= reserved[i]);
  CHECK(reader.read_units("/train/op_timeline/start_ns") == "ns");
  CHECK(reader.num_rows("/train/op_timeline/op") > 100);
}

TEST_CASE("the topology flag takes a node id, a node file or a cluster file alike", "[cli][training]") {
  const std::string base =
      "train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-gpus 16 "
      "--strategy fsdp-full --format json --topology ";
  const Run by_id = run(base + "h100-sxm-8x-nvswitch", false);
  const Run by_node_file =
      run(base + root() + "/topologies/nodes/h100-sxm-8x-nvswitch.toml", false);
  const Run by_cluster = run(base + root() + "/scenarios/training/cluster-h100-ib400.toml", false);
  REQUIRE(by_id.exit_code == 0);
  REQUIRE(by_node_file.exit_code == 0);
  REQUIRE(by_cluster.exit_code == 0);
  const auto a = nlohmann::json::parse(by_id.out);
  CHECK(a["gpus_per_node"] == 8);
  CHECK(a["step_time_s"] == nlohmann::json::parse(by_node_file.out)["step_time_s"]);
  CHECK(a["step_time_s"] == nlohmann::json::parse(by_cluster.out)["step_time_s"]);
  SECTION("a node of 4 GPUs puts the job on 4 nodes and slows its collectives") {
    const auto four = nlohmann::json::parse(run(base + "nvswitch-4x", false).out);
    CHECK(four["gpus_per_node"] == 4);
    CHECK(four["exposed_comm_s"].get<double>() > a["exposed_comm_s"].get<double>());
  }
  SECTION("a mistyped node id lists the valid ones, a node of another GPU is refused") {
    const Run typo = run(base + "h100-sxm-8x-nvswich");
    CHECK(typo.exit_code == 2);
    CHECK(typo.out.find("h100-sxm-8x-nvswitch") != std::string::npos);
    CHECK(run(base + "a100-sxm-80g-8x-nvswitch").exit_code == 2);
    CHECK(run(base + "pcie-8x --gpus-per-node 16").exit_code == 2);
  }
}

TEST_CASE("an unknown model and a TP that splits no KV head evenly name --model and --tp",
          "[cli][training]") {
  const Run model = run("train --model meta-llama/Llama-9B --gpu h100-sxm");
  CHECK(model.exit_code == 2);
  CHECK(model.out.find("error: --model:") != std::string::npos);
  // Llama-3.1-8B has 8 KV heads; Megatron splits query groups, it never replicates them.
  const Run tp = run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-gpus 16 --tp 16");
  CHECK(tp.exit_code == 2);
  CHECK(tp.out.find("--tp: tensor-parallel size 16 does not divide num_key_value_heads") !=
        std::string::npos);
  const Run zero = run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --micro-batch 0");
  CHECK(zero.exit_code == 2);
  CHECK(zero.out.find("--micro-batch") != std::string::npos);
}

TEST_CASE("train --calibration with the fixture profile changes the step time and says so",
          "[cli][training][cost]") {
  const std::string base =
      "train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --seq-len 2048 --format json";
  const Run plain = run(base, false);
  const Run calibrated =
      run(base + " --calibration " + root() + "/tests/hardware/data/h100_fixture_profile.json",
          false);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(calibrated.exit_code == 0);
  const auto a = nlohmann::json::parse(plain.out);
  const auto b = nlohmann::json::parse(calibrated.out);
  CHECK(a["calibration_source"] == "datasheet roofline");
  CHECK(b["calibration_source"].get<std::string>().find("h100_fixture_profile.json") !=
        std::string::npos);
  CHECK(a["cost_estimates"]["measured"] == 0);
  CHECK(b["cost_estimates"]["measured"].get<int>() > 0);
  CHECK(b["step_time_s"].get<double>() != a["step_time_s"].get<double>());
  CHECK(b["peak_reserved_bytes"] == a["peak_reserved_bytes"]);
}

TEST_CASE("train --calibration with a missing profile or another GPU's is exit 2",
          "[cli][training][cost]") {
  const Run missing = run(
      "train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --calibration /no/such/profile.json");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.find("/no/such/profile.json") != std::string::npos);
  const Run other = run("train --model meta-llama/Llama-3.1-8B --gpu a100-sxm-80g --calibration " +
                        root() + "/tests/hardware/data/h100_fixture_profile.json");
  CHECK(other.exit_code == 2);
  CHECK(other.out.find("was measured on 'h100-sxm', not on --gpu 'a100-sxm-80g'") !=
        std::string::npos);
}

TEST_CASE("a training scenario's hardware.calibration is a profile path relative to the file",
          "[cli][training][cost]") {
  const auto dir = std::filesystem::temp_directory_path() / "vramsim_train_calibration_test";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(root() + "/tests/hardware/data/h100_fixture_profile.json",
                             dir / "profile.json",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream out(dir / "scenario.toml");
    out << "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
           "calibration = \"profile.json\"\n[batch]\nseq_len = 2048\n";
  }
  const Run r = run("train " + (dir / "scenario.toml").string() + " --format json", false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["calibration_source"] == (dir / "profile.json").string());
  CHECK(j["cost_estimates"]["measured"].get<int>() > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train --attention and --kernels choose the attention core and the memory-bound "
          "kernels, and refuse an unknown name with the valid ones",
          "[cli][training]") {
  const std::string base = "train --model " + root() +
                           "/tests/validation/models/megatron-gpt-22b.json --gpu a100-sxm-80g "
                           "--num-gpus 8 --tp 8 --checkpointing selective --sequence-parallel "
                           "--format json";
  const Run flash = run(base, false);
  const Run eager = run(base + " --attention eager --kernels megatron", false);
  REQUIRE(flash.exit_code == 0);
  REQUIRE(eager.exit_code == 0);
  const auto jf = nlohmann::json::parse(flash.out);
  const auto je = nlohmann::json::parse(eager.out);
  // Eager attention keeps the s x s probabilities, their dropout mask and output per head.
  CHECK(je["devices"][0]["activation_bytes"].get<std::int64_t>() !=
        jf["devices"][0]["activation_bytes"].get<std::int64_t>());
  CHECK(je["step_time_s"].get<double>() != jf["step_time_s"].get<double>());

  const Run bad = run(base + " --attention sdpa");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("flash, eager") != std::string::npos);
  const Run bad_kernels = run(base + " --kernels fused");
  CHECK(bad_kernels.exit_code == 2);
  CHECK(bad_kernels.out.find("eager, megatron") != std::string::npos);
}

TEST_CASE("train --framework names the framework that owns the gradients, reports it, and "
          "refuses a strategy it does not have",
          "[cli][training]") {
  const std::string base = "train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --num-gpus 8 "
                           "--checkpointing full --format json";
  const Run implied = run(base + " --strategy zero2", false);
  REQUIRE(implied.exit_code == 0);
  CHECK(nlohmann::json::parse(implied.out)["framework"] == "deepspeed");
  const Run megatron = run(base + " --strategy ddp --framework megatron", false);
  const Run pytorch = run(base + " --strategy ddp --framework pytorch", false);
  REQUIRE(megatron.exit_code == 0);
  REQUIRE(pytorch.exit_code == 0);
  const auto jm = nlohmann::json::parse(megatron.out);
  CHECK(jm["framework"] == "megatron");
  CHECK(jm["devices"][0]["model_state_bytes"].get<std::int64_t>() >
        nlohmann::json::parse(pytorch.out)["devices"][0]["model_state_bytes"].get<std::int64_t>());

  const Run bad = run(base + " --framework torch");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("auto, pytorch, deepspeed, megatron") != std::string::npos);
  const Run wrong = run(base + " --framework pytorch --strategy zero3");
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.out.find("fsdp-full") != std::string::npos);
}
