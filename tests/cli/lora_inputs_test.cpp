// LoRA and QLoRA settings of `vramsim train` (issue 17): bad values end with exit code 2 and a
// message naming the flag or scenario line and the module at fault; a good QLoRA run prints
// PEFT's trainable-parameter line.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

const std::string kBase =
    "train --model meta-llama/Llama-3.1-8B --gpu rtx-4090 --seq-len 512 --checkpointing full ";

struct Row {
  std::string args;
  std::string expect;  // a substring of the message: the flag and the value at fault
};

}  // namespace

TEST_CASE("bad LoRA flags are refused with exit 2, naming the flag and the value",
          "[cli][lora]") {
  const std::vector<Row> rows = {
      {"--lora-rank 16 --lora-targets q_proj,qkv_proj",
       "'qkv_proj' is not a linear module of meta-llama/Llama-3.1-8B"},
      {"--lora-rank 16 --lora-targets q_proj,,v_proj", "'' is not a module name"},
      {"--lora-rank 16 --lora-targets 'q proj'", "'q proj' is not a module name"},
      {"--lora-rank 16 --lora-targets all-linear,q_proj", "all-linear stands alone"},
      {"--lora-rank -1", "--lora-rank"},
      {"--lora-rank 16 --lora-dropout 1.5", "--lora-dropout"},
      {"--lora-rank 16 --lora-alpha 0", "--lora-alpha"},
      {"--lora-rank 16 --lora-trainable-extra embed_tokens,head", "unknown module 'head'"},
      {"--base-quant nf5 --lora-rank 16", "unknown value 'nf5'"},
      {"--base-quant nf4", "needs LoRA adapters"},
  };
  for (const Row& row : rows) {
    INFO(row.args);
    const Run r = run(kBase + row.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(row.expect) != std::string::npos);
  }
}

TEST_CASE("a LoRA target in a scenario file is refused at its file:line", "[cli][lora]") {
  const std::filesystem::path dir = temp_dir();
  {
    std::ofstream f(dir / "lora_bad_targets.toml");
    f << "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"rtx-4090\"\n"
         "[lora]\nrank = 16\ntargets = \"q_proj,w_pack\"\n";
  }
  const Run r = run("train lora_bad_targets.toml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("lora_bad_targets.toml:7") != std::string::npos);
  CHECK(r.out.find("'w_pack' is not a linear module") != std::string::npos);
}

TEST_CASE("a QLoRA run reports PEFT's trainable parameters and the frozen NF4 base",
          "[cli][lora][qlora]") {
  const Run r = run(kBase + "--lora-rank 16 --lora-targets q_proj,v_proj --base-quant nf4 "
                            "--format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("trainable_params") == 6'815'744);
  CHECK(j.at("all_params") == 8'037'076'992);
  CHECK(j.at("base_quant") == "nf4");
  CHECK(j.at("lora_targets") == nlohmann::json::array({"q_proj", "v_proj"}));
  CHECK(j.at("frozen_weights_bytes").get<double>() / 1e9 == Approx(5.70).margin(0.02));
  CHECK(j.at("fits") == true);
  const Run table = run(kBase + "--lora-rank 16 --base-quant nf4");
  CHECK(table.out.find("trainable params: 6815744 || all params: 8037076992") !=
        std::string::npos);
}
