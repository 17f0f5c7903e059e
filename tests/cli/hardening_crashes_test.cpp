// Issue 18, "crashes and hangs": inputs that used to abort `vramsim` on an internal check, end it
// through an uncaught exception, or exhaust the machine's memory. Each row runs the built binary
// in its own temp folder and must exit with the expected code and name the flag, setting, file or
// limit at fault; none may abort (134), be killed, or print an internal error.
#include <sys/wait.h>

#include <cstdio>
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

namespace fs = std::filesystem;

struct Row {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;  // written into the row's folder
  std::string args;                                         // may start with VAR=value
  int exit_code = 2;
  std::string expect;  // a substring of the output
};

const std::string kServe = "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path row_dir(const std::string& table, std::size_t i) {
  const fs::path dir = temp_dir() / ("hardening_" + table + "_" + std::to_string(i));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Runs `args` (after `env`, e.g. "VRAMSIM_ROOT=x") through the shell in `dir`.
Run run_with_env(const std::string& env, const std::string& args, const fs::path& dir) {
  if (env.empty()) return run(args, dir);
  // cli_test_support's run puts the binary first; an assignment before it needs the shell.
  return vramsim::testing::shell("cd '" + dir.string() + "' && " + env + " " + VRAMSIM_BINARY +
                                 " " + args);
}

void run_table(const std::string& table, const std::vector<Row>& rows,
               const std::string& env = "") {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    CAPTURE(row.name, row.args);
    const fs::path dir = row_dir(table, i);
    for (const auto& [name, text] : row.files) {
      fs::create_directories((dir / name).parent_path());
      std::ofstream(dir / name, std::ios::binary) << text;
    }
    std::string args = row.args;
    std::string row_env = env;
    // A row's own leading VAR=value words go before the binary too.
    while (!args.empty() && args.find('=') < args.find(' ') && args.rfind("--", 0) != 0) {
      const std::size_t space = args.find(' ');
      if (!row_env.empty()) row_env += ' ';  // appended, not "" + ...: GCC 12's -Wrestrict
      row_env += args.substr(0, space);
      args = args.substr(space + 1);
    }
    const Run r = run_with_env(row_env, args, dir);
    CAPTURE(r.out);
    CHECK(r.exit_code == row.exit_code);
    CHECK(r.out.find(row.expect) != std::string::npos);
    CHECK(r.out.find("internal error") == std::string::npos);
    CHECK(r.out.find("terminate called") == std::string::npos);
  }
}

// A Llama-shaped model small enough that its KV cache holds more than 2^31 blocks on one GPU:
// one layer, one KV head of dimension 1, so 4 bytes of KV per token (K and V in bf16).
const std::string kTinyModel = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16",
  "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
  "num_attention_heads": 8, "num_key_value_heads": 1, "vocab_size": 64,
  "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
  "tie_word_embeddings": false
})";

}  // namespace

TEST_CASE("arrivals past the simulator's clock are refused as input, naming the setting",
          "[cli][hardening]") {
  run_table("clock", {
      {"a tiny rate", {}, kServe + "--synthetic poisson --rate 1e-300 --num-requests 3", 2,
       "--rate: 3 requests at 1e-300 requests/s"},
      {"a tiny rate over many requests", {},
       kServe + "--synthetic poisson --rate 1e-9 --num-requests 1000", 2,
       "more than the simulator's clock holds"},
      {"a tiny time scale", {},
       kServe + "--synthetic poisson --rate 10 --num-requests 30 --time-scale 1e-12", 2,
       "--time-scale 1e-12"},
      {"a trace timestamp past the clock",
       {{"t.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n5000000000,100,10\n"}},
       kServe + "--trace t.csv", 2, "t.csv:3: trace: arrival 5000000000 s after the first row's"},
      {"a trace made past the clock by its time scale",
       {{"t.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n100,100,10\n"}},
       kServe + "--trace t.csv --time-scale 1e-8", 2, "line 3"},
  });
}

TEST_CASE("no exception escapes main: a folder as --calibration is bad input naming the path",
          "[cli][hardening]") {
  const fs::path dir = row_dir("calibration", 0);
  fs::create_directories(dir / "profiles");
  const Run r = run(kServe + "--num-requests 5 --calibration profiles", dir);
  CAPTURE(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("profiles") != std::string::npos);
  CHECK(r.out.find("is a folder, not a profile file") != std::string::npos);
  CHECK(r.out.find("terminate called") == std::string::npos);
  // The same for budget, which reads the profile too.
  const Run b = run("budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm --calibration profiles",
                    dir);
  CHECK(b.exit_code == 2);
  CHECK(b.out.find("is a folder") != std::string::npos);
}

TEST_CASE("a burst past the requests held in memory is refused, naming the limit",
          "[cli][hardening]") {
  const std::string limit_500 = "[serving]\nmax_requests_in_system = 500\n";
  // A sweep over the limit: the point at 10 cannot hold a 50-request burst.
  const std::string sweep =
      "command = \"serve\"\n[base]\nmodel.id = \"meta-llama/Llama-3.1-8B\"\n"
      "hardware.gpu = \"h100-sxm\"\nworkload.synthetic = \"burst\"\n"
      "workload.num_requests = 50\n[grid]\n\"serving.max_requests_in_system\" = [100, 10, 200]\n";
  run_table("burst", {
      {"a burst over a lowered limit", {},
       kServe + "--synthetic burst --num-requests 20000 --max-requests-in-system 500", 2,
       "--max-requests-in-system: 501 requests are in the system at once"},
      {"the message names the flag and the scenario field that raise it", {},
       kServe + "--synthetic burst --num-requests 20000 --max-requests-in-system 500", 2,
       "(500; --max-requests-in-system, or serving.max_requests_in_system in the scenario, "
       "raises it"},
      {"the same burst under a raised limit", {},
       kServe + "--synthetic burst --num-requests 2000 --max-requests-in-system 2000 "
                "--format json",
       0, "\"num_finished\": 2000"},
      {"a scenario's lowered limit", {{"s.toml", limit_500}},
       "serve s.toml --model meta-llama/Llama-3.1-8B --gpu h100-sxm --synthetic burst "
       "--num-requests 20000",
       2, "s.toml:2: serving.max_requests_in_system: 501 requests are in the system at once"},
      {"a flag over the scenario's limit", {{"s.toml", limit_500}},
       "serve s.toml --model meta-llama/Llama-3.1-8B --gpu h100-sxm --synthetic burst "
       "--num-requests 2000 --max-requests-in-system 2000 --format json",
       0, "\"num_finished\": 2000"},
      {"a limit that is not a number", {}, kServe + "--num-requests 5 --max-requests-in-system lots",
       2, "--max-requests-in-system"},
      {"a limit of zero", {}, kServe + "--num-requests 5 --max-requests-in-system 0", 2,
       "--max-requests-in-system: must be positive, got 0"},
      {"a limit past int32", {}, kServe + "--num-requests 5 --max-requests-in-system 2147483648",
       2, "must be at most 2147483647, got 2147483648"},
      {"a scenario limit that is not an integer",
       {{"s.toml", "[serving]\nmax_requests_in_system = \"many\"\n"}},
       "serve s.toml --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-requests 5", 2,
       "s.toml:2"},
      {"a sweep point over its limit is an error point, the sweep goes on", {{"sw.toml", sweep}},
       "sweep sw.toml --out sw.h5", 0,
       "#1 error: serving.max_requests_in_system: 11 requests are in the system at once"},
      {"... and the point after it runs", {{"sw.toml", sweep}}, "sweep sw.toml --out sw.h5", 0,
       "2  ok      200 "},
      {"the environment variable is gone: it no longer lowers the limit", {},
       "VRAMSIM_MAX_REQUESTS_IN_SYSTEM=5 " + kServe +
           "--synthetic burst --num-requests 50 --format json",
       0, "\"num_finished\": 50"},
  });
}

TEST_CASE("a KV cache of more than 2^31 blocks is served in the memory its requests use",
          "[cli][hardening]") {
  const fs::path dir = row_dir("kv", 0);
  std::ofstream(dir / "config.json") << kTinyModel;
  // 4 B of KV per token, 64 B per block: an MI300X's ~170 GB hold about 2.7e9 blocks, whose
  // eager metadata alone (24 B a block) would take 64 GB. Under a 4 GiB address-space limit
  // the run must finish.
  const Run budget = run("budget --model config.json --gpu mi300x --format json", dir);
  REQUIRE(budget.exit_code == 0);
  const std::size_t at = budget.out.find("\"num_gpu_blocks\": ");
  REQUIRE(at != std::string::npos);
  const double blocks = std::stod(budget.out.substr(at + 18));
  CAPTURE(blocks);
  CHECK(blocks > 2147483647.0);
  const Run r = run_with_env(
      "ulimit -v 4194304 &&",
      "serve --model config.json --gpu mi300x --synthetic poisson --rate 50 --num-requests 200 "
      "--prompt-tokens uniform:10:2000 --output-tokens uniform:5:200 --enable-prefix-caching "
      "--format json",
      dir);
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"num_finished\": 200") != std::string::npos);
}

TEST_CASE("a sweep records a point past the clock as an error, keeps the others, says so on stderr",
          "[cli][hardening][sweep]") {
  const fs::path dir = row_dir("sweep", 0);
  std::ofstream(dir / "g.toml") << R"(command = "serve"
[base]
seed = 3
model.id = "meta-llama/Llama-3.1-8B-Instruct"
hardware.gpu = "h100-sxm"
engine.max_model_len = 4096
workload.synthetic = "poisson"
workload.num_requests = 20
workload.prompt_tokens = "uniform:100:800"
workload.output_tokens = "uniform:20:100"
[grid]
"workload.rate" = [8.0, 1e-300, 4.0]
)";
  const std::string cmd = "cd '" + dir.string() + "' && " + VRAMSIM_BINARY +
                          " sweep g.toml --out s.h5 -j 1 --format json >stdout.txt 2>stderr.txt";
  const int status = std::system(cmd.c_str());
  const std::string out = slurp(dir / "stdout.txt");
  const std::string err = slurp(dir / "stderr.txt");
  CAPTURE(out, err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(err.find("vramsim sweep: point 1: error:") != std::string::npos);
  CHECK(err.find("1e-300 requests/s") != std::string::npos);
  CHECK(err.find("point 0") == std::string::npos);
  // stdout is the summary JSON alone: points 0 and 2 finished, point 1 an error.
  CHECK(out.find("\"status\": \"error\"") != std::string::npos);
  CHECK(out.find("vramsim sweep:") == std::string::npos);
  CHECK(fs::exists(dir / "s.h5"));

  // A resume over a journal edited by hand: the bad line is named by file and line on stderr,
  // and its point runs again.
  fs::remove(dir / "s.h5");
  std::ofstream(dir / "s.h5.journal") << R"({"index": "0", "status": "ok"})" << "\n";
  const std::string again = "cd '" + dir.string() + "' && " + VRAMSIM_BINARY +
                            " sweep g.toml --out s.h5 -j 1 --resume >stdout.txt 2>stderr.txt";
  REQUIRE(std::system(again.c_str()) == 0);
  const std::string err2 = slurp(dir / "stderr.txt");
  CAPTURE(err2);
  CHECK(err2.find("s.h5.journal:1: ignoring a record that is not one") != std::string::npos);
  CHECK(slurp(dir / "stdout.txt").find("3 points") != std::string::npos);
}

TEST_CASE("an absurd device sheet is refused by the loader, naming file, field and range",
          "[cli][hardening]") {
  const std::string sheet = slurp(root() + "/topologies/devices/h100-sxm.toml");
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = sheet;
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
  };
  struct Case {
    std::string name;
    std::string text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"1 B/s of memory bandwidth", edited("bandwidth = \"3.35TB/s\"", "bandwidth = \"1B/s\""),
       "h100-sxm.toml:21: memory.bandwidth: 1 B/s is outside the accepted range [1e+09, 1e+15]"},
      {"1 FLOP/s of fp16", edited("fp16 = \"989.4TFLOPS\"", "fp16 = \"1FLOPS\""),
       "compute.fp16: 1 FLOP/s is outside the accepted range"},
      {"a petabyte of memory", edited("total = \"85045477376B\"", "total = \"1000TB\""),
       "memory.total: 1e+15 B is outside the accepted range"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CAPTURE(c.name);
    // A data root whose only device is the edited sheet, beside the real scenarios.
    const fs::path dir = row_dir("sheet", i);
    fs::create_directories(dir / "topologies" / "devices");
    fs::create_directories(dir / "topologies" / "nodes");
    fs::create_symlink(root() + "/scenarios", dir / "scenarios");
    std::ofstream(dir / "topologies" / "devices" / "h100-sxm.toml") << c.text;
    const Run r = run_with_env("VRAMSIM_ROOT='" + dir.string() + "'",
                               kServe + "--num-requests 5", dir);
    CAPTURE(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
  }
}
