// A vLLM command pasted after "--" answers as the vramsim flags it means (issue 14): vLLM's
// spellings (-tp, --max_model_len=32k, --no-enable-chunked-prefill, GiB sizes), its launchers
// (vllm serve, python -m vllm.entrypoints.openai.api_server, the vllm/vllm-openai image, one
// quoted string), flags that change nothing named once, flags vramsim does not model refused,
// and --kv-cache-memory-bytes (vllm/v1/worker/gpu_worker.py: the cache as given, no profile).
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::testing::run;

bool has(const std::string& out, const std::string& part) {
  return out.find(part) != std::string::npos;
}

// The output without the "note:" lines the pasted command adds on stderr.
std::string without_notes(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.rfind("note: ", 0) != 0) kept += line + "\n";
  }
  return kept;
}

nlohmann::json json_of(const vramsim::testing::Run& r) {
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(without_notes(r.out));
}

const std::string kModel = "meta-llama/Llama-3.1-8B-Instruct";

}  // namespace

TEST_CASE("a pasted vllm serve command answers as the same settings given as flags",
          "[cli][vllm-command]") {
  const auto flags = run("budget " + kModel + " --gpu h100-sxm --tp 2 --max-model-len 32000 "
                         "--max-num-seqs 128 --kv-cache-dtype fp8 --no-enable-chunked-prefill "
                         "--gpu-memory-utilization 0.85 --format json");
  const nlohmann::json expected = json_of(flags);
  CHECK(expected["tp"] == 2);
  CHECK(expected["max_model_len"] == 32000);
  // vLLM's spellings: -tp, 32k = 32,000, --name_with_underscores=value, fp8_e4m3, --no- forms.
  const std::string tail = " -tp 2 --max-model-len 32k --max_num_seqs=128 "
                           "--kv-cache-dtype fp8_e4m3 --no-enable-chunked-prefill "
                           "--gpu-memory-utilization 0.85";
  const auto pasted =
      run("budget --gpu h100-sxm --format json -- vllm serve " + kModel + tail);
  CHECK(json_of(pasted) == expected);
  CHECK(has(pasted.out, "note: the pasted vLLM command reads as: --model " + kModel +
                            " --tp 2 --max-model-len 32k --max-num-seqs 128"));
  // The other launchers: the OpenAI server module, the container image of a docker line (its
  // own flags before the image are not read), and the whole command in one quoted word with
  // an environment assignment and a line continuation.
  CHECK(json_of(run("budget --gpu h100-sxm --format json -- python -m "
                    "vllm.entrypoints.openai.api_server --model " + kModel + tail)) == expected);
  CHECK(json_of(run("budget --gpu h100-sxm --format json -- docker run --gpus all -p 8000:8000 "
                    "--ipc=host vllm/vllm-openai:v0.19.0 --model " + kModel + tail)) == expected);
  CHECK(json_of(run("budget --gpu h100-sxm --format json -- 'CUDA_VISIBLE_DEVICES=0,1 vllm "
                    "serve " + kModel + " \\\n" + tail + "'")) == expected);
}

TEST_CASE("the pasted command's flags that change nothing are named once, and vramsim's own "
          "flags override it",
          "[cli][vllm-command]") {
  auto r = run("budget --gpu h100-sxm -- vllm serve " + kModel +
               " --host 0.0.0.0 --port 8000 --served-model-name a b --trust-remote-code "
               "--enable-auto-tool-choice --tool-call-parser llama3_json -O3 --async-scheduling "
               "--max-model-len 8192");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "note: ignored, as they change neither memory nor time here: --host "
                   "0.0.0.0, --port 8000, --served-model-name a b, --trust-remote-code, "
                   "--enable-auto-tool-choice, --tool-call-parser llama3_json\n"));
  CHECK(has(r.out, "answered as with vLLM's defaults (they change time or the CUDA-graph "
                   "estimate only): -O3\n"));
  // --swap-space is a serve setting: budget names it as ignored; serve reads vLLM's GiB.
  r = run("budget --gpu h100-sxm -- vllm serve " + kModel + " --swap-space 4 --max-model-len 8k");
  CHECK(has(r.out, "ignored, as they change neither memory nor time here: --swap-space 4"));
  r = run("serve --gpu h100-sxm --synthetic poisson --rate 1 --num-requests 5 "
          "--prompt-tokens fixed:64 --output-tokens fixed:4 -- vllm serve " + kModel +
          " --swap-space 4 --max-model-len 8k");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "reads as: --model " + kModel + " --swap-space 4GiB --max-model-len 8k"));
  // A vramsim flag before "--" wins over the pasted one.
  const nlohmann::json j = json_of(run("budget --gpu h100-sxm --max-model-len 4096 --format json "
                                       "-- vllm serve " + kModel + " --max-model-len 32k"));
  CHECK(j["max_model_len"] == 4096);
}

TEST_CASE("a pasted --async-scheduling or --no-async-scheduling sets serve's async scheduling",
          "[cli][vllm-command]") {
  const std::string serve = "serve --gpu h100-sxm --synthetic poisson --rate 1 --num-requests 5 "
                            "--prompt-tokens fixed:64 --output-tokens fixed:4 --format json ";
  // vLLM 0.13 leaves it off unless asked (on by default from 0.14).
  auto j = json_of(run(serve + "--vllm-version 0.13.0 -- vllm serve " + kModel +
                       " --max-model-len 8k --async-scheduling"));
  CHECK(j["inputs"]["async_scheduling"] == true);
  j = json_of(run(serve + "-- vllm serve " + kModel + " --max-model-len 8k --no-async-scheduling"));
  CHECK(j["inputs"]["async_scheduling"] == false);
  auto r = run("serve --gpu h100-sxm --synthetic poisson --rate 1 --num-requests 5 "
               "--prompt-tokens fixed:64 --output-tokens fixed:4 -- vllm serve " + kModel +
               " --max-model-len 8k --async-scheduling");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "--async-scheduling"));
  CHECK_FALSE(has(r.out, "answered as with vLLM's defaults"));
  // The table says whether it was on.
  CHECK(has(r.out, "; async scheduling on\n"));
  r = run("serve --gpu h100-sxm --synthetic poisson --rate 1 --num-requests 5 "
          "--prompt-tokens fixed:64 --output-tokens fixed:4 -- vllm serve " + kModel +
          " --max-model-len 8k --no-async-scheduling");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "; async scheduling off\n"));
}

TEST_CASE("pasted flags vramsim does not model are refused, mistyped ones named",
          "[cli][vllm-command]") {
  auto r = run("budget --gpu h100-sxm -- vllm serve " + kModel +
               " --enable-lora --lora-extra-vocab-size 256 --scheduling-policy priority");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "error: vllm command: --lora-extra-vocab-size 256: LoRA's extra vocabulary"));
  CHECK(has(r.out, "error: vllm command: --scheduling-policy priority: only vLLM's default "
                   "(fcfs) is modelled"));
  // vLLM's defaults and the negative form of a refused switch are accepted.
  r = run("budget --gpu h100-sxm --max-model-len 8192 -- vllm serve " + kModel +
          " --no-enable-lora --scheduling-policy fcfs --max-num-partial-prefills 1");
  CHECK(r.exit_code == 0);
  r = run("budget --gpu h100-sxm -- vllm serve " + kModel + " --max-num-seq 8");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "'--max-num-seq' is not a flag of `vllm serve` (vLLM 0.19's flags); did you "
                   "mean --max-num-seqs"));
  r = run("budget --gpu h100-sxm -- vllm serve " + kModel + " --max-model-len");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--max-model-len needs a value"));
  r = run("budget --gpu h100-sxm -- vllm serve --max-model-len 8k");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "names no model"));
  r = run("list gpus -- vllm serve " + kModel);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "read by budget, serve, compare serve and capacity serve"));
  r = run("budget --gpu h100-sxm -- 'vllm serve " + kModel + " --chat-template \"x'");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "unterminated double quote"));
}

TEST_CASE("kv-cache-memory-bytes sizes the cache as given and checks the device holds it",
          "[cli][vllm-command]") {
  // Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 128 KiB per token,
  // a 16-token block 2 MiB; 20G (vLLM: 20 GiB) = 10,240 blocks = 163,840 tokens, whatever the
  // memory profile would have left (vLLM skips it and ignores gpu_memory_utilization).
  nlohmann::json j = json_of(run("budget --gpu h100-sxm --format json -- vllm serve " + kModel +
                                 " --kv-cache-memory-bytes 20G --gpu-memory-utilization 0.5"));
  CHECK(j["kv_cache_memory_bytes"] == 20LL * 1024 * 1024 * 1024);
  CHECK(j["num_gpu_blocks"] == 10240);
  CHECK(j["kv_cache_tokens"] == 163840);
  CHECK(j["fits"] == true);
  // On a 24 GB RTX 4090 the 15 GiB of weights leave no room for 20 GiB: refused, with the
  // largest size that fits.
  const auto r = run("budget " + kModel + " --gpu rtx-4090 --max-model-len 8192 "
                     "--kv-cache-memory-bytes 20G");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "Fits: NO. the KV cache given by kv_cache_memory_bytes (20.00 GiB) does not "
                   "fit beside the rest on device 0"));
  CHECK(has(r.out, "--kv-cache-memory-bytes "));
  CHECK_FALSE(has(r.out, "--max-model-len 8192 would fit"));
  // vLLM's --num-gpu-blocks-override is the same setting as --num-gpu-blocks.
  j = json_of(run("budget " + kModel + " --gpu h100-sxm --num-gpu-blocks-override 1000 "
                  "--format json"));
  CHECK(j["num_gpu_blocks"] == 1000);
}
