// Issue 18 through the command line: valid trace and node files that used to be refused now run
// (quoted CSV, the format told by content, a node file outside topologies/), and trace inputs
// that used to hang, fill memory or wrap the clock end at once with exit 2 naming the file.
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using namespace vramsim::testing;

namespace {

struct Case {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;
  std::string args;
  int exit_code;
  std::string expect;  // a substring of the output
};

const std::string kServe =
    "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --format json --trace ";
const std::string kPlainRows = "\"0.0\",\"100\",\"10\"\r\n\"0.5\",\"200\",\"20\"\r\n";
const std::string kMooncakeRows =
    "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"hash_ids\": [1]}\n"
    "{\"timestamp\": 500, \"input_length\": 600, \"output_length\": 20, \"hash_ids\": [1, 2]}\n";

void check_cases(const std::vector<Case>& cases, const std::string& group) {
  const auto group_dir = temp_dir() / ("hardening_" + group + "_" + std::to_string(::getpid()));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    // NOTE: a folder of its own per case, never named after the case: a name such as
    // "/dev/zero" would make the folder the device itself.
    const auto dir = group_dir / ("case-" + std::to_string(i));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const auto& [name, text] : c.files) {
      std::filesystem::create_directories((dir / name).parent_path());
      std::ofstream(dir / name, std::ios::binary) << text;
    }
    const Run r = run(c.args, dir);
    INFO(c.name << ": vramsim " << c.args << "\n" << r.out);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.out.find(c.expect) != std::string::npos);
    std::filesystem::remove_all(dir);
  }
  std::filesystem::remove_all(group_dir);
}

}  // namespace

TEST_CASE("quoted CSV traces and traces named by any extension are served", "[cli][hardening]") {
  const std::vector<Case> cases = {
      {"QUOTE_ALL plain CSV with a BOM and CRLF",
       {{"t.csv",
         "\xEF\xBB\xBF\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\r\n" + kPlainRows}},
       kServe + "t.csv",
       0,
       "\"num_requests\": 2,"},
      {"QUOTE_ALL Azure CSV",
       {{"a.csv",
         "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\n"
         "\"2023-11-16 18:15:46.6805900\",\"374\",\"44\"\n"
         "\"2023-11-16 18:15:50.7487730\",\"396\",\"109\"\n"}},
       kServe + "a.csv",
       0,
       "\"num_requests\": 2,"},
      {"upper-case extension",
       {{"T.CSV", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,100,10\n2,100,10\n"}},
       kServe + "T.CSV",
       0,
       "\"num_requests\": 3,"},
      {"Mooncake named .json",
       {{"m.json", kMooncakeRows}},
       kServe + "m.json",
       0,
       "\"num_requests\": 2,"},
      {"Mooncake without extension",
       {{"conversation", kMooncakeRows}},
       kServe + "conversation",
       0,
       "\"num_requests\": 2,"},
      {"plain CSV named .jsonl",
       {{"t.jsonl", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n"}},
       kServe + "t.jsonl",
       0,
       "\"num_requests\": 1,"},
  };
  check_cases(cases, "valid");
}

TEST_CASE("trace inputs that cannot end, fill memory or wrap the clock exit 2 naming the file",
          "[cli][hardening]") {
  std::string huge = "arrival_s,prompt_tokens,output_tokens\n0,";
  huge.append(std::size_t{65} << 20, '1');
  const std::vector<Case> cases = {
      {"unknown content names --trace-format",
       {{"t.txt", "a,b,c\n0,1,1\n"}},
       kServe + "t.txt",
       2,
       "t.txt:1: trace: cannot detect the trace format of 't.txt': its first line 'a,b,c' is "
       "neither a JSON object (mooncake) nor the header of azure or csv; name the format with "
       "--trace-format"},
      {"the zero device",
       {},
       kServe + "/dev/zero",
       2,
       "'/dev/zero' is a character device, not a regular file"},
      {"the zero device with a format",
       {},
       kServe + "/dev/zero --trace-format mooncake",
       2,
       "'/dev/zero' is a character device, not a regular file"},
      {"a directory", {{"d/x", ""}}, kServe + "d", 2, "'d' is a directory, not a trace file"},
      {"a 65 MiB line",
       {{"t.csv", huge}},
       kServe + "t.csv",
       2,
       "t.csv:2: trace: line 2 is longer than 67108864 bytes (64 MiB)"},
      {"plain CSV 285 years apart",
       {{"t.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n9000000000,100,10\n"}},
       kServe + "t.csv",
       2,
       "t.csv:3: trace: arrival 9000000000 s after the first row's; a trace may span at most "
       "3155760000 s (100 years)"},
      {"Mooncake 292 years apart",
       {{"m.jsonl",
         "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10}\n"
         "{\"timestamp\": 9223372036854, \"input_length\": 100, \"output_length\": 10}\n"}},
       kServe + "m.jsonl",
       2,
       "m.jsonl:2: trace: arrival 9223372036 s after the first row's"},
      {"Azure 291 years apart",
       {{"a.csv",
         "TIMESTAMP,ContextTokens,GeneratedTokens\n1970-01-01 00:00:00,374,44\n"
         "2261-12-31 23:59:59,374,44\n"}},
       kServe + "a.csv",
       2,
       "a.csv:3: trace: arrival "},
  };
  check_cases(cases, "refused");
}

TEST_CASE("a FIFO as a trace exits 2 at once instead of waiting for a writer", "[cli][hardening]") {
  const auto dir = temp_dir() / ("hardening_fifo_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  REQUIRE(::mkfifo((dir / "t.csv").c_str(), 0600) == 0);
  const Run r = run(kServe + "t.csv", dir);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("'t.csv' is a FIFO (named pipe), not a regular file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node file outside topologies naming a built-in device trains", "[cli][hardening]") {
  const auto node = [](const std::string& device) {
    return "id = \"my-h100-4x\"\ndescription = \"four H100 SXM on NVSwitch\"\nnum_gpus = 4\n"
           "device = \"" +
           device +
           "\"\nsources = [\"test\"]\n[fabric]\nkind = \"nvswitch\"\nlatency = \"3.4us\"\n";
  };
  const std::string train =
      "train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --topology mine/my-h100-4x.toml ";
  const std::vector<Case> cases = {
      {"node file in a folder of its own",
       {{"mine/my-h100-4x.toml", node("h100-sxm")}},
       train + "--format json",
       0,
       "\"step_time_s\""},
      {"node file naming a mistyped device",
       {{"mine/my-h100-4x.toml", node("h100-sxn")}},
       train,
       2,
       "my-h100-4x.toml:4: device: unknown device id 'h100-sxn'; valid ids: a100-pcie-80g"},
  };
  check_cases(cases, "node");
}

TEST_CASE("CSV records whose quoted fields span lines are read as RFC 4180 records",
          "[cli][hardening]") {
  const std::string header = "arrival_s,prompt_tokens,output_tokens\n";
  const std::string broken = header + "0,100,10\n\"1\r\n\",100,10\n2,100,10\n";
  const std::vector<Case> cases = {
      {"a CRLF inside a quoted arrival is one bad row, named at its first line",
       {{"t.csv", broken}},
       kServe + "t.csv",
       2,
       // '1??': the field's CR and LF, written apart since ??' is a trigraph.
       "t.csv:3: trace: arrival_s: expected a non-negative finite number of seconds, got '1?"
       "?' (the record spans lines 3-4: a quoted field holds a line break)"},
      {"skipped, it is one row: the row after it is served",
       {{"t.csv", broken}},
       kServe + "t.csv --on-malformed skip",
       0,
       "\"trace_rows_skipped\": 1,"},
      {"a length-statistics file with a multi-line note column feeds --prompt-tokens",
       {{"st.csv", "\"num_prefill_tokens\",\"num_decode_tokens\",\"note\"\n"
                   "100,10,\"two\nlines\"\n200,20,x\n"}},
       "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --format json --num-requests 4 "
       "--prompt-tokens trace:st.csv --output-tokens trace:st.csv",
       0,
       "\"num_requests\": 4,"},
  };
  check_cases(cases, "multiline");
}
