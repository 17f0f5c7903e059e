// The bad input catalogue (issue 7): malformed traces, scenario files, model configs,
// calibration profiles, results files and flags, across every command that reads them. Each row
// is run through the built `vramsim` in its own temp folder and must end with exit code 2 and a
// message naming the file, line or field at fault: no crash, no hang, no silent default. A last
// table holds absurd but well-formed requests that must be refused or answered quickly.
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

struct Row {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;  // written into the row's folder
  std::string args;
  int exit_code = 2;
  std::string expect;  // a substring of the output: the file, line or field
};

// 3,000 bytes of deterministic "binary garbage" (NULs and bytes >= 0x80 included).
std::string garbage() {
  std::string out;
  std::uint32_t x = 2463534242u;
  for (int i = 0; i < 3000; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out += static_cast<char>(x & 0xffu);
  }
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The Llama-3.1-8B config of the zoo with `edit` applied.
template <class F>
std::string llama_config(F edit) {
  auto j = nlohmann::json::parse(slurp(root() + "/scenarios/models/meta-llama__Llama-3.1-8B.json"));
  edit(j);
  return j.dump();
}

void check_rows(const std::vector<Row>& rows, const std::string& group) {
  const auto group_dir = temp_dir() / ("catalogue_" + group + "_" + std::to_string(::getpid()));
  for (const Row& row : rows) {
    const auto dir = group_dir / row.name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const auto& [name, text] : row.files) {
      std::filesystem::create_directories((dir / name).parent_path());
      std::ofstream(dir / name, std::ios::binary) << text;
    }
    const Run r = run(row.args, dir);
    INFO(row.name << ": vramsim " << row.args << "\n" << r.out);
    CHECK(r.exit_code == row.exit_code);
    CHECK(r.out.find(row.expect) != std::string::npos);
    std::filesystem::remove_all(dir);
  }
  std::filesystem::remove_all(group_dir);
}

const std::string kServe = "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";
const std::string kBudget = "budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";
const std::string kTrain = "train --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";
const std::string kPlainHeader = "arrival_s,prompt_tokens,output_tokens\n";
const std::string kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
const std::string kMooncakeRow = R"({"timestamp": 0, "input_length": 100, "output_length": 10})";
const std::string kScenarioHead =
    "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n";

}  // namespace

TEST_CASE("malformed traces exit 2 naming the file and line", "[cli][catalogue]") {
  const std::vector<Row> rows = {
      {"negative tokens", {{"t.csv", kPlainHeader + "0.0,100,10\n1.0,-5,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:3: trace: prompt_tokens"},
      {"zero tokens", {{"t.csv", kPlainHeader + "0.0,100,10\n1.0,100,0\n"}},
       kServe + "--trace t.csv", 2, "t.csv:3: trace: output_tokens"},
      {"timestamps backwards", {{"t.csv", kPlainHeader + "1.0,100,10\n0.5,100,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:3: trace: arrival goes backwards"},
      {"NaN arrival", {{"t.csv", kPlainHeader + "nan,100,10\n"}}, kServe + "--trace t.csv", 2,
       "t.csv:2: trace: arrival_s"},
      {"overflowing token count", {{"t.csv", kPlainHeader + "0,99999999999999999999999,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:2: trace: prompt_tokens"},
      {"10 GB token count", {{"t.csv", kPlainHeader + "0,10000000000,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:2: trace: prompt_tokens"},
      {"overflowing arrival", {{"t.csv", kPlainHeader + "1e308,100,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:2: trace: arrival_s"},
      {"empty trace", {{"t.csv", ""}}, kServe + "--trace t.csv", 2, "'t.csv'"},
      {"only comments", {{"t.csv", "# a\n\n# b\n"}}, kServe + "--trace t.csv", 2,
       "'t.csv': it has no header, only blank lines or comments"},
      {"header only", {{"t.csv", kPlainHeader}}, kServe + "--trace t.csv", 2,
       "t.csv: trace: no data rows"},
      {"truncated row", {{"t.csv", kPlainHeader + "0.0,100,10\n1.0,10"}},
       kServe + "--trace t.csv", 2, "t.csv:3: trace: expected 3 columns"},
      {"binary CSV", {{"t.csv", garbage()}}, kServe + "--trace t.csv", 2,
       "cannot detect the trace format of 't.csv'"},
      {"Azure backwards",
       {{"a.csv", kAzureHeader + "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:45.0,374,44\n"}},
       kServe + "--trace a.csv", 2, "a.csv:3: trace: arrival goes backwards"},
      {"Azure February 30", {{"a.csv", kAzureHeader + "2023-02-30 18:15:46.68,374,44\n"}},
       kServe + "--trace a.csv", 2, "a.csv:2: trace: TIMESTAMP"},
      {"Azure negative tokens", {{"a.csv", kAzureHeader + "2023-11-16 18:15:46.68,-374,44\n"}},
       kServe + "--trace a.csv", 2, "a.csv:2: trace: ContextTokens"},
      {"Mooncake negative length",
       {{"m.jsonl", kMooncakeRow + "\n" +
                        R"({"timestamp": 5, "input_length": -3, "output_length": 10})" + "\n"}},
       kServe + "--trace m.jsonl", 2, "m.jsonl:2: trace: input_length"},
      {"Mooncake truncated", {{"m.jsonl", kMooncakeRow + "\n{\"timestamp\": 5, \"hash_ids\": [1,"}},
       kServe + "--trace m.jsonl", 2, "m.jsonl:2: trace: not valid JSON"},
      {"Mooncake 1e400", {{"m.jsonl", R"({"timestamp": 1e400, "input_length": 1})"}},
       kServe + "--trace m.jsonl", 2, "m.jsonl:1: trace: not valid JSON"},
      {"Mooncake negative hash id",
       {{"m.jsonl",
         R"({"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1, -2]})"}},
       kServe + "--trace m.jsonl", 2, "m.jsonl:1: trace: hash_ids"},
      {"binary JSONL", {{"m.jsonl", garbage()}}, kServe + "--trace m.jsonl", 2, "m.jsonl:"},
      {"unknown content", {{"t.txt", "a,b,c\n0,1,1\n"}}, kServe + "--trace t.txt", 2,
       "name the format with --trace-format"},
      {"missing trace", {}, kServe + "--trace nope.csv", 2, "cannot open trace file 'nope.csv'"},
      {"unknown trace format", {{"t.csv", kPlainHeader + "0,1,1\n"}},
       kServe + "--trace t.csv --trace-format parquet", 2, "--trace-format"},
  };
  check_rows(rows, "traces");
}

TEST_CASE("malformed scenario and topology files exit 2 naming file:line and key",
          "[cli][catalogue]") {
  const std::vector<Row> rows = {
      {"TP that does not divide the heads", {{"s.toml", kScenarioHead + "[engine]\ntp = 3\n"}},
       "budget s.toml", 2, "s.toml:6: engine.tp"},
      {"explicit zero max_model_len", {{"s.toml", kScenarioHead + "[engine]\nmax_model_len = 0\n"}},
       "budget s.toml", 2, "s.toml:6: engine.max_model_len: must be positive"},
      {"NaN utilization",
       {{"s.toml", kScenarioHead + "[engine]\ngpu_memory_utilization = nan\n"}}, "budget s.toml",
       2, "s.toml:6: engine.gpu_memory_utilization"},
      {"integer beyond 64 bits",
       {{"s.toml", kScenarioHead + "[engine]\nblock_size = 99999999999999999999\n"}},
       "budget s.toml", 2, "s.toml:6"},
      {"block size not a power of two", {{"s.toml", kScenarioHead + "[engine]\nblock_size = 24\n"}},
       "budget s.toml", 2, "engine.block_size"},
      {"a bandwidth unit for a size",
       {{"s.toml", kScenarioHead + "[serving]\nswap_space = \"4 GiB/s\"\n"}}, "serve s.toml", 2,
       "s.toml:6: serving.swap_space: unknown unit"},
      {"truncated TOML", {{"s.toml", kScenarioHead + "[engine\ntp = 1\n"}}, "budget s.toml", 2,
       "s.toml:5: TOML syntax error"},
      {"unknown key", {{"s.toml", kScenarioHead + "[engine]\ntpp = 1\n"}}, "budget s.toml", 2,
       "engine.tpp: unknown key"},
      {"binary TOML", {{"s.toml", garbage()}}, "budget s.toml", 2, "s.toml:1"},
      {"negative micro-batch in a training scenario",
       {{"t.toml", kScenarioHead + "num_gpus = 8\n[batch]\nmicro_batch = -1\nseq_len = 4096\n"}},
       "train t.toml", 2, "t.toml:7: batch.micro_batch"},
      {"GiB where Gbps was meant",
       {{"c.toml", "[network]\nbandwidth_per_gpu = \"400GiB\"\nlatency = \"5us\"\n"}},
       kTrain + "--num-gpus 16 --topology c.toml", 2, "c.toml:2: network.bandwidth_per_gpu"},
      {"latency without a unit",
       {{"c.toml", "[network]\nbandwidth_per_gpu = \"400Gbps\"\nlatency = \"5\"\n"}},
       kTrain + "--num-gpus 16 --topology c.toml", 2, "c.toml:3: network.latency"},
      // Issue 18: an absurd link was blamed on --seq-len once its collectives overflowed the clock.
      {"a 1 B/s network",
       {{"c.toml", "[network]\nbandwidth_per_gpu = \"1B/s\"\nlatency = \"5us\"\n"}},
       kTrain + "--num-gpus 16 --topology c.toml", 2,
       "c.toml:2: network.bandwidth_per_gpu: 1 B/s is outside the accepted range"},
      {"a one-hour network latency",
       {{"c.toml", "[network]\nbandwidth_per_gpu = \"400Gbps\"\nlatency = \"60min\"\n"}},
       kTrain + "--num-gpus 16 --topology c.toml", 2,
       "c.toml:3: network.latency: 3600 s is above the accepted 1 s"},
  };
  check_rows(rows, "scenarios");
}

TEST_CASE("malformed model configs and calibration profiles exit 2 naming file and field",
          "[cli][catalogue]") {
  using nlohmann::json;
  const std::string llama = llama_config([](json&) {});
  const std::string profile = slurp(root() + "/tests/hardware/data/h100_fixture_profile.json");
  const std::vector<Row> rows = {
      {"unknown architecture",
       {{"c.json", llama_config([](json& j) { j["architectures"] = {"FooForCausalLM"}; })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: architectures: unknown architecture"},
      {"missing field", {{"c.json", llama_config([](json& j) { j.erase("hidden_size"); })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: hidden_size: missing required field"},
      {"negative size", {{"c.json", llama_config([](json& j) { j["hidden_size"] = -4096; })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: hidden_size: must be a positive"},
      {"string size", {{"c.json", llama_config([](json& j) { j["num_hidden_layers"] = "32"; })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: num_hidden_layers: expected an integer"},
      {"absurd width", {{"c.json", llama_config([](json& j) { j["hidden_size"] = 1e15; })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: hidden_size: expected at most"},
      {"absurd depth",
       {{"c.json", llama_config([](json& j) { j["num_hidden_layers"] = 1'000'000'000'000; })}},
       "train --model c.json --gpu h100-sxm", 2, "c.json: num_hidden_layers: expected at most"},
      {"trillion-token context",
       {{"c.json",
         llama_config([](json& j) { j["max_position_embeddings"] = 1'000'000'000'000; })}},
       "serve --model c.json --gpu h100-sxm", 2, "c.json: max_position_embeddings"},
      {"KV heads that do not divide the heads",
       {{"c.json", llama_config([](json& j) { j["num_key_value_heads"] = 7; })}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: num_key_value_heads: must divide"},
      {"number beyond double", {{"c.json", R"({"hidden_size": 1e400})"}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: not valid JSON"},
      {"truncated config", {{"c.json", llama.substr(0, llama.size() / 2)}},
       "budget --model c.json --gpu h100-sxm", 2, "c.json: not valid JSON"},
      {"binary config", {{"c.json", garbage()}}, "budget --model c.json --gpu h100-sxm", 2,
       "c.json: not valid JSON"},
      {"profile number beyond double",
       {{"p.json", R"({"format": "vramsim-calibration-profile", "format_version": 1e400})"}},
       "calibrate-report p.json", 2, "p.json: calibration: not valid JSON"},
      {"profile with missing fields",
       {{"p.json", R"({"format": "vramsim-calibration-profile", "format_version": 1})"}},
       "calibrate-report p.json", 2, "p.json: device_id: missing"},
      {"truncated profile", {{"p.json", profile.substr(0, profile.size() / 3)}},
       kBudget + "--calibration p.json", 2, "p.json: calibration: not valid JSON"},
      {"binary results file", {{"r.h5", garbage()}}, "report r.h5 -o out", 2, "'r.h5'"},
      {"missing results file", {}, "report nope.h5", 2, "'nope.h5' does not exist"},
  };
  check_rows(rows, "configs");
}

TEST_CASE("bad flags exit 2 naming the flag", "[cli][catalogue]") {
  const std::vector<Row> rows = {
      {"negative max-model-len", {}, kBudget + "--max-model-len -5", 2, "--max-model-len"},
      {"zero max-model-len", {}, kBudget + "--max-model-len 0", 2,
       "--max-model-len: must be positive, got 0"},
      {"zero num-gpu-blocks", {}, kBudget + "--num-gpu-blocks 0", 2, "--num-gpu-blocks"},
      {"TP that does not divide the heads", {}, kBudget + "--tp 3", 2,
       "--tp: tensor-parallel size 3 does not divide num_attention_heads"},
      {"block size not a power of two", {}, kBudget + "--block-size 24", 2,
       "--block-size: must be a power of two"},
      {"NaN utilization", {}, kBudget + "--gpu-memory-utilization nan", 2,
       "--gpu-memory-utilization"},
      {"unknown device", {}, "budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm-foo", 2,
       "--gpu: unknown device id 'h100-sxm-foo'"},
      {"unknown model", {}, "budget --model nosuch/model --gpu h100-sxm", 2, "'nosuch/model'"},
      {"unknown dtype", {}, kBudget + "--dtype bf17", 2, "--dtype"},
      {"NaN rate", {}, kServe + "--rate nan", 2, "--rate"},
      {"zero requests", {}, kServe + "--num-requests 0", 2, "--num-requests"},
      {"negative requests", {}, kServe + "--num-requests -5", 2, "--num-requests"},
      {"GiB for a duration", {}, kServe + "--duration 5GiB", 2, "--duration: unknown unit"},
      {"duration without a unit", {}, kServe + "--slo-ttft 2", 2, "--slo-ttft"},
      {"size without a unit", {}, kServe + "--swap-space 4", 2, "--swap-space"},
      {"10 GB prompt length", {}, kServe + "--prompt-tokens fixed:10000000000", 2,
       "--prompt-tokens"},
      {"zero time scale", {}, kServe + "--time-scale 0 --num-requests 5", 2, "--time-scale"},
      {"unknown scheduler", {}, kServe + "--scheduler fifo", 2, "--scheduler"},
      {"zero GPUs in train", {}, kTrain + "--num-gpus 0", 2, "--num-gpus"},
      {"TP that does not divide the GPUs", {}, kTrain + "--num-gpus 8 --tp 3", 2, "--num-gpus"},
      {"unknown precision", {}, kTrain + "--precision fp4", 2, "--precision"},
      {"compare train on zero GPUs", {},
       "compare train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-gpus 0", 2,
       "--num-gpus"},
      {"compare train at a price that is not positive", {},
       "compare train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --gpu-price-per-hour -2", 2,
       "--gpu-price-per-hour: must be > 0"},
      {"capacity serve without an objective", {},
       "capacity serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm", 2, "--slo-ttft-p99"},
      {"missing profile", {}, "calibrate-report nope.json", 2, "nope.json"},
  };
  check_rows(rows, "flags");
}

TEST_CASE("absurd sizes are refused, or answered without exhausting memory or time",
          "[cli][catalogue][limits]") {
  const std::vector<Row> rows = {
      {"a trillion-token context", {}, kBudget + "--max-model-len 1000000000000", 2,
       "--max-model-len: must be at most 2147483647, got 1000000000000"},
      {"a context beyond the model limit", {}, kBudget + "--max-model-len 1000000000", 2,
       "--max-model-len: 1000000000 exceeds the model's derived max_model_len"},
      {"a trillion-token training sequence", {}, kTrain + "--num-gpus 8 --seq-len 1000000000000",
       2, "--seq-len: must be at most"},
      {"a step longer than the simulated clock holds", {},
       "train --model meta-llama/Llama-3.1-405B --gpu t4 --seq-len 16000000 --micro-batch 1 "
       "--global-batch 1000",
       2, "more than the simulator's clock holds"},
      {"2^33 tokens per micro-batch", {},
       kTrain + "--num-gpus 8 --seq-len 8388608 --micro-batch 1024", 2, "--micro-batch"},
      {"more KV blocks than the schema allows", {}, kBudget + "--num-gpu-blocks 100000000000", 2,
       "--num-gpu-blocks: must be at most 2147483647, got 100000000000"},
      {"more KV blocks than the device holds", {}, kBudget + "--num-gpu-blocks 1000000000", 2,
       "--num-gpu-blocks: 1000000000 blocks"},
      {"a million replicas", {}, kServe + "--replicas 1000000 --num-requests 10", 2,
       "--replicas: must be in [1, 4096]"},
      {"TP beyond int64", {}, kBudget + "--tp 99999999999999999999", 2, "--tp"},
      {"a hundred million GPUs", {}, kTrain + "--num-gpus 100000000", 2, "--num-gpus"},
      // Answered: a million data-parallel ranks are arithmetic, not a million simulated objects.
      {"a million GPUs", {}, kTrain + "--num-gpus 1000000 --strategy fsdp-full", 0,
       "1000000 x h100-sxm"},
      // Answered: every request arrives at t = 0 (gaps round to 0 ns).
      {"a rate of 1e300", {}, kServe + "--rate 1e300 --num-requests 100", 0,
       "100 arrived, 100 finished"},
  };
  check_rows(rows, "limits");
}

// Issue 18, silent wrong answers: sizes and counts beyond their bound, settings vLLM refuses at
// start-up, settings a run would ignore, empty values and destinations that are not files.
TEST_CASE("bounds: sizes and counts beyond their documented bound are refused, not wrapped",
          "[cli][catalogue][limits]") {
  const std::vector<Row> rows = {
      // 2^63 - 1 tokens "fitted" in 3.42 GiB: tokens x bytes per token wrapped.
      {"int64-max batched tokens", {}, kBudget + "--max-num-batched-tokens 9223372036854775807",
       2, "--max-num-batched-tokens: must be at most 2147483647, got 9223372036854775807"},
      {"int64-max batched tokens in serve", {},
       kServe + "--max-num-batched-tokens 9223372036854775807", 2,
       "--max-num-batched-tokens: must be at most 2147483647"},
      {"a seed beyond int64", {}, kServe + "--seed 99999999999999999999 --num-requests 5", 2,
       "'99999999999999999999' is outside the 64-bit integer range"},
      {"a count in hex", {}, kServe + "--num-requests 0x10", 2,
       "expected an integer (8192, or with vLLM's suffixes: 8k = 8000, 8K = 8192"},
      {"a binary suffix with decimals", {}, kBudget + "--max-model-len 1.5K", 2,
       "decimals are not allowed with binary suffixes like K"},
      {"2^31 blocks in a scenario",
       {{"s.toml", kScenarioHead + "[engine]\nnum_gpu_blocks = 2147483648\n"}}, "budget s.toml",
       2, "s.toml:6: engine.num_gpu_blocks: must be at most 2147483647"},
      {"swap space beyond 1 PiB", {}, kServe + "--swap-space 2048TiB", 2,
       "--swap-space: must be at most"},
      {"an infinite rate", {}, kServe + "--rate inf", 2, "--rate: must be a finite number"},
      {"an infinite rate in a scenario",
       {{"s.toml", kScenarioHead + "[workload]\nrate = inf\n"}}, "serve s.toml", 2,
       "s.toml:6: workload.rate: must be a finite number"},
      {"an infinite time scale", {}, kServe + "--time-scale inf", 2,
       "--time-scale: must be a finite number"},
      {"an infinite GPU price", {},
       "compare serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --gpu-price-per-hour inf",
       2, "--gpu-price-per-hour: must be > 0 and finite"},
      {"an infinite GPU price for training", {},
       "compare train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --gpu-price-per-hour inf",
       2, "--gpu-price-per-hour: must be > 0 and finite"},
      {"2^31 training sequences", {}, kTrain + "--num-gpus 8 --global-batch 2147483648", 2,
       "--global-batch: must be at most 2147483647"},
  };
  check_rows(rows, "bounds");
}

TEST_CASE("settings vLLM refuses at start-up exit 2 naming both settings",
          "[cli][catalogue][vllm]") {
  const std::vector<Row> rows = {
      {"fewer batched tokens than sequences", {},
       kBudget + "--max-num-batched-tokens 512 --max-num-seqs 1024", 2,
       "--max-num-batched-tokens: max_num_batched_tokens (512) is smaller than max_num_seqs "
       "(1024): vLLM refuses"},
      {"more sequences than the default batched tokens", {}, kBudget + "--max-num-seqs 10000",
       2, "--max-num-seqs: max_num_batched_tokens (8192) is smaller than max_num_seqs (10000)"},
      {"serve with fewer batched tokens than sequences", {},
       kServe + "--max-num-batched-tokens 64 --max-num-seqs 128 --num-requests 5", 2,
       "vLLM refuses this at start-up"},
      {"chunked prefill off below max_model_len", {},
       kBudget + "--no-enable-chunked-prefill --max-num-batched-tokens 4096 --max-model-len 8192",
       2,
       "--max-num-batched-tokens: max_num_batched_tokens (4096) is smaller than max_model_len "
       "(8192) with chunked prefill off"},
      {"chunked prefill off below max_model_len in a scenario",
       {{"s.toml", kScenarioHead +
                       "[engine]\nmax_num_batched_tokens = 4096\nmax_model_len = 8192\n"
                       "[serving]\nenable_chunked_prefill = false\n"}},
       "budget s.toml", 2, "s.toml:6: engine.max_num_batched_tokens"},
      {"bf16 on a T4", {}, "budget --model meta-llama/Llama-3.1-8B --gpu t4 --dtype bf16", 2,
       "--dtype: bf16 on t4 (hardware.gpu), which has no bf16: vLLM refuses"},
      {"fp8 weights on a T4", {},
       "budget --model meta-llama/Llama-3.1-8B --gpu t4 --dtype fp16 --quantization fp8", 2,
       "--quantization: fp8 needs compute capability 8.0 or newer in vLLM; t4 (hardware.gpu) has 7.5"},
  };
  check_rows(rows, "vllm");
}

TEST_CASE("settings a run would silently ignore, and empty values, exit 2 naming them",
          "[cli][catalogue][ignored]") {
  const std::string trace = kPlainHeader + "0.0,100,10\n0.5,200,20\n";
  const std::string with_trace = kScenarioHead + "[workload]\ntrace = \"t.csv\"\n";
  const std::vector<Row> rows = {
      {"a rate with a trace", {{"t.csv", trace}}, kServe + "--trace t.csv --rate 5", 2,
       "--rate: a synthetic-workload setting, ignored while --trace replays a trace"},
      {"prompt lengths with a trace", {{"t.csv", trace}},
       kServe + "--trace t.csv --prompt-tokens fixed:64", 2, "--prompt-tokens: a synthetic"},
      {"a synthetic workload with a trace", {{"t.csv", trace}},
       kServe + "--trace t.csv --synthetic poisson", 2,
       "--synthetic: a synthetic workload and --trace together"},
      {"a request count over a scenario trace", {{"s.toml", with_trace}, {"t.csv", trace}},
       "serve s.toml --num-requests 5", 2,
       "--num-requests: a synthetic-workload setting, ignored while workload.trace (s.toml:6)"},
      {"a cv with poisson arrivals", {}, kServe + "--synthetic poisson --cv 2 --num-requests 5",
       2, "--cv: the coefficient of variation of gamma arrivals, ignored by 'poisson'"},
      {"a rate with burst arrivals", {}, kServe + "--synthetic burst --rate 3 --num-requests 5",
       2, "--rate: ignored by 'burst' arrivals"},
      {"prefix tokens without groups", {}, kServe + "--prefix-tokens 64 --num-requests 5", 2,
       "--prefix-tokens: a shared prefix needs both"},
      {"prefix groups without tokens", {}, kServe + "--prefix-groups 4 --num-requests 5", 2,
       "--prefix-groups: a shared prefix needs both"},
      {"an empty --out", {}, kServe + "--num-requests 5 --out ''", 2, "--out"},
      {"an empty --out for budget", {}, kBudget + "--out ''", 2, "--out"},
      {"an empty --out for train", {}, kTrain + "--out ''", 2, "--out: must not be empty"},
      {"an empty --out for sweep", {{"g.toml", "[sweep]\nmode = \"serve\"\n"}},
       "sweep g.toml --out ''", 2, "--out: must not be empty"},
      {"an empty --out for calibrate-report", {}, "calibrate-report " + root() +
       "/tests/hardware/data/h100_fixture_profile.json --out ''", 2, "--out: must not be empty"},
      {"an empty trace name", {}, kServe + "--trace ''", 2, "--trace: must not be empty"},
      {"an empty model", {}, "budget --model '' --gpu h100-sxm", 2, "--model: must not be empty"},
      {"an empty GPU in a scenario", {{"s.toml", "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n"
                                                 "[hardware]\ngpu = \"\"\n"}},
       "budget s.toml", 2, "s.toml:4: hardware.gpu: must not be empty"},
  };
  check_rows(rows, "ignored");
}

TEST_CASE("a --out that is not a regular file is refused, and messages name the real problem",
          "[cli][catalogue][out]") {
  const std::vector<Row> rows = {
      {"--out /dev/null", {}, kBudget + "--out /dev/null", 2,
       "--out: cannot write results file '/dev/null': it is a character device"},
      {"--out a directory", {}, kBudget + "--out .", 2, "--out"},
      {"a 256-byte --out name", {}, kBudget + "--out " + std::string(253, 'n') + ".h5", 2,
       "its name is 256 bytes, more than the 255"},
      {"a mistyped flag with its value", {}, "budget --modle meta-llama/Llama-3.1-8B --gpu h100-sxm",
       2, "unknown flag '--modle'; did you mean --model? (its value 'meta-llama/Llama-3.1-8B' "
          "was taken as the scenario"},
      {"a missing scenario", {}, "budget nope.toml", 2, "scenario file 'nope.toml' does not exist"},
      {"a folder as the scenario", {{"d/.keep", ""}}, "budget d", 2,
       "'d' is a directory, not a scenario file"},
      {"a folder given to report", {{"d/.keep", ""}}, "report d", 2,
       "'d' is a directory, not a results file"},
  };
  check_rows(rows, "out");
}

TEST_CASE("a calibration profile whose CUDA context exceeds the device is refused or does not fit",
          "[cli][catalogue][calibration]") {
  std::string profile = slurp(root() + "/tests/hardware/data/h100_fixture_profile.json");
  const std::string measured = "\"cuda_context_bytes\": 557842432";
  const std::size_t at = profile.find(measured);
  REQUIRE(at != std::string::npos);
  // 80 GiB of context on an 80 GiB (reported 79.19 GiB) H100 is a profile no device wrote: refused
  // at its field by the profile's reader. 16 GiB is possible but leaves less free than
  // gpu_memory_utilization 0.9 asks: the budget does not fit.
  std::string whole = profile;
  whole.replace(at, measured.size(), "\"cuda_context_bytes\": 85899345920");
  std::string large = profile;
  large.replace(at, measured.size(), "\"cuda_context_bytes\": 17179869184");
  const std::vector<Row> rows = {
      {"a context larger than the device", {{"p.json", whole}}, kBudget + "--calibration p.json",
       2, "p.json: memory.cuda_context_bytes: 85899345920 exceeds total_bytes"},
      {"a context larger than what utilization leaves", {{"p.json", large}},
       kBudget + "--calibration p.json --format json", 0, "\"fits\": false"},
      {"serve on such a profile", {{"p.json", whole}},
       kServe + "--calibration p.json --num-requests 5", 2, "a CUDA context larger than the device"},
      {"serve on a profile whose context leaves too little", {{"p.json", large}},
       kServe + "--calibration p.json --num-requests 5", 3, "vLLM refuses to start"},
  };
  check_rows(rows, "calibration");
}

TEST_CASE("an unset or broken data root is an error naming the root and VRAMSIM_ROOT",
          "[cli][catalogue][root]") {
  const auto empty_root = temp_dir() / ("empty_root_" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty_root / "topologies");
  REQUIRE(::setenv("VRAMSIM_ROOT", empty_root.c_str(), 1) == 0);
  const std::vector<Row> rows = {
      {"list gpus", {}, "list gpus", 2, "VRAMSIM_ROOT: '" + empty_root.string() +
                                            "' has no scenarios/models/ folder"},
      {"list models", {}, "list models", 2, "set VRAMSIM_ROOT to the vramsim checkout"},
      {"budget", {}, kBudget, 2, "VRAMSIM_ROOT: '" + empty_root.string() + "'"},
      {"serve", {}, kServe + "--num-requests 5", 2, "VRAMSIM_ROOT"},
  };
  check_rows(rows, "root");
  REQUIRE(::unsetenv("VRAMSIM_ROOT") == 0);
  std::filesystem::remove_all(empty_root);
}
