// A mistyped flag is named with the command's closest spellings (issue 14): exit 2, one line
// per mistyped word, whether its value was taken as the scenario file or left over.
#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::testing::run;

const std::string kBudget = "budget --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";

bool has(const std::string& out, const std::string& part) {
  return out.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the flag max-num-seq with 8 is named as a mistyped max-num-seqs, not a missing scenario "
          "file",
          "[cli][flags]") {
  const auto r = run(kBudget + "--max-num-seq 8");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "unknown flag '--max-num-seq'; did you mean --max-num-seqs?"));
  CHECK_FALSE(has(r.out, "does not exist"));
}

TEST_CASE("mistyped flags get the closest spellings of the command they were given to",
          "[cli][flags]") {
  // --flag=value, left over by the parser.
  auto r = run(kBudget + "--max-num-seqq=8");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "unknown flag '--max-num-seqq=8'; did you mean --max-num-seqs?"));
  // A prefix of a longer flag (vLLM's spelling).
  r = run(kBudget + "--tensor-parallel 2");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "did you mean --tensor-parallel-size?"));
  // Each word abbreviated.
  r = run(kBudget + "--gpu-mem-util 0.8");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "did you mean --gpu-memory-utilization?"));
  // A subcommand's own flags: compare serve's.
  r = run("compare serve " + vramsim::testing::root() + "/scenarios/default.toml --num-request 10");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "unknown flag '--num-request'; did you mean --num-requests?"));
  CHECK(has(r.out, "unexpected argument '10'"));
  // Nothing close: the help is named instead.
  r = run(kBudget + "--zzz");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "unknown flag '--zzz'; see --help for the flags"));
}

TEST_CASE("a repeated flag: the last one wins, as in vLLM, and every value is still checked",
          "[cli][flags]") {
  auto r = run(kBudget + "--tp 2 --tp 4");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "TP=4 PP=1"));
  r = run(kBudget + "--max-model-len 8k --max-model-len 4k --format json");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "\"max_model_len\": 4000"));
  r = run(kBudget + "--no-enforce-eager --enforce-eager --format json");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "\"cuda_graph_bytes\": 0"));
  r = run(kBudget + "--tp 0x2 --tp 2");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "got '0x2'"));
}
