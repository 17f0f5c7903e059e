// --deepspeed-config: a ds_config.json read into training settings (sim/run/deepspeed_config),
// the way Hugging Face Trainer's templates write it ("auto" left to the run), with its problems
// named at the file and line.
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/run/train_options.hpp"
#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"

using vramsim::ConfigError;
using vramsim::run::TrainOptions;
namespace fs = std::filesystem;

namespace {

// `json` written to a file of its own under the test's temporary folder.
fs::path write_config(const std::string& name, const std::string& json) {
  const fs::path dir = fs::temp_directory_path() / "vramsim_deepspeed_config_test";
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file, std::ios::binary) << json;
  return file;
}

TrainOptions resolve(const fs::path& config, const std::string& extra = "") {
  const std::string text = "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\n"
                           "gpu = \"h100-sxm\"\nnum_gpus = 8\n[parallel]\ndeepspeed_config = \"" +
                           config.generic_string() + "\"\n" + extra;
  return vramsim::run::resolve_train_options(
      vramsim::run::load_train_scenario_text(text, "s.toml", config.parent_path()));
}

std::string problems(const fs::path& config, const std::string& extra = "") {
  try {
    (void)resolve(config, extra);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

// Hugging Face's ds_config_zero3.json (transformers docs, "DeepSpeed"), with a UTF-8 BOM and
// CRLF line ends as an editor on Windows leaves them.
const std::string kHfZero3 =
    "\xEF\xBB\xBF{\r\n"
    "  \"bf16\": {\"enabled\": \"auto\"},\r\n"
    "  \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": \"auto\"}},\r\n"
    "  \"scheduler\": {\"type\": \"WarmupLR\", \"params\": {\"warmup_num_steps\": \"auto\"}},\r\n"
    "  \"zero_optimization\": {\r\n"
    "    \"stage\": 3,\r\n"
    "    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true},\r\n"
    "    \"offload_param\": {\"device\": \"none\"},\r\n"
    "    \"overlap_comm\": true,\r\n"
    "    \"contiguous_gradients\": true,\r\n"
    "    \"sub_group_size\": 1e9,\r\n"
    "    \"reduce_bucket_size\": \"auto\",\r\n"
    "    \"stage3_prefetch_bucket_size\": \"auto\",\r\n"
    "    \"stage3_param_persistence_threshold\": \"auto\",\r\n"
    "    \"stage3_max_live_parameters\": 1e9,\r\n"
    "    \"stage3_max_reuse_distance\": 1e9,\r\n"
    "    \"stage3_gather_16bit_weights_on_model_save\": true\r\n"
    "  },\r\n"
    "  \"gradient_accumulation_steps\": 4,\r\n"
    "  \"gradient_clipping\": \"auto\",\r\n"
    "  \"steps_per_print\": 2000,\r\n"
    "  \"train_micro_batch_size_per_gpu\": 2,\r\n"
    "  \"wall_clock_breakdown\": false\r\n"
    "}\r\n";

}  // namespace

TEST_CASE("a DeepSpeed configuration sets the ZeRO stage, offload, buckets, precision and batch",
          "[run][deepspeed]") {
  const fs::path file = write_config("ds zero3 (copy).json", kHfZero3);
  const TrainOptions o = resolve(file);
  CHECK(o.strategy == vramsim::training::Strategy::kZero3);
  CHECK(o.offload_optimizer);
  CHECK(o.offload_optimizer_device == vramsim::training::OffloadDevice::kCpu);
  CHECK(o.offload_params == vramsim::training::OffloadParams::kNone);
  CHECK(o.sub_group_size == 1'000'000'000);
  CHECK(o.max_reuse_distance == 1'000'000'000);
  CHECK(o.optimizer == vramsim::training::Optimizer::kAdamW);
  // bf16 "auto": the run's own precision (the default, bf16-mixed).
  CHECK(o.precision == vramsim::training::Precision::kBf16Mixed);
  CHECK(o.micro_batch == 2);
  CHECK(o.global_batch == 2 * 4 * 8);  // micro-batch x accumulation steps x 8 DP ranks
  // "auto" reduce_bucket_size: hidden_size^2, as Trainer fills it, once the model is known.
  CHECK(o.reduce_bucket_size_auto);
  const vramsim::training::TrainingSetup s = vramsim::run::resolve_training(o);
  CHECK(s.plan.reduce_bucket_size == 4096LL * 4096);
  CHECK(s.plan.num_micro_batches() == 4);
  // The origin of a setting the configuration made is the configuration.
  CHECK(o.origin("parallel.strategy").where.file == file.string());
}

TEST_CASE("a DeepSpeed configuration without half precision or ZeRO trains fp32 DDP, as DeepSpeed "
          "does",
          "[run][deepspeed]") {
  const TrainOptions o = resolve(write_config("plain.json", "{\"train_batch_size\": 16}"));
  CHECK(o.precision == vramsim::training::Precision::kFp32);
  CHECK(o.strategy == vramsim::training::Strategy::kDdp);
  CHECK(o.global_batch == 16);
  // DeepSpeed's engine runs it (stage 0), not PyTorch DDP.
  CHECK(o.framework == vramsim::training::Framework::kDeepspeed);
  CHECK(vramsim::run::resolve_training(o).plan.deepspeed_stage0());
  const TrainOptions z2 = resolve(write_config(
      "z2.json", "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2, "
                 "\"overlap_comm\": true, \"reduce_bucket_size\": 5e8}}"));
  CHECK(z2.precision == vramsim::training::Precision::kBf16Mixed);
  CHECK(z2.strategy == vramsim::training::Strategy::kZero2);
  CHECK(z2.overlap_comm);
  CHECK(z2.reduce_bucket_size == 500'000'000);
  CHECK_FALSE(z2.reduce_bucket_size_auto);
}

TEST_CASE("a DeepSpeed configuration's problems are named at the file and line",
          "[run][deepspeed]") {
  // A key this model neither reads nor can leave out.
  const fs::path unknown = write_config(
      "unknown.json", "{\n  \"zero_optimization\": {\n    \"stage\": 3,\n"
                      "    \"zero_quantized_weights\": true\n  }\n}\n");
  const std::string u = problems(unknown);
  CHECK_THAT(u, Catch::Contains("unknown.json:4"));
  CHECK_THAT(u, Catch::Contains("zero_optimization.zero_quantized_weights"));
  // Not JSON.
  const std::string bad =
      problems(write_config("bad.json", "{\n  \"bf16\": {\"enabled\": true,}\n}"));
  CHECK_THAT(bad, Catch::Contains("bad.json:2"));
  CHECK_THAT(bad, Catch::Contains("not valid JSON"));
  // Wrong values.
  CHECK_THAT(problems(write_config("stage.json", "{\"zero_optimization\": {\"stage\": 4}}")),
             Catch::Contains("must be 0-3, got 4"));
  CHECK_THAT(problems(write_config("dev.json", "{\"zero_optimization\": {\"stage\": 3, "
                                               "\"offload_param\": {\"device\": \"disk\"}}}")),
             Catch::Contains("expected \"none\", \"cpu\" or \"nvme\", got \"disk\""));
  CHECK_THAT(problems(write_config("opt.json", "{\"optimizer\": {\"type\": \"Lamb\"}}")),
             Catch::Contains("\"Lamb\" is not modelled"));
  CHECK_THAT(problems(write_config("count.json", "{\"train_micro_batch_size_per_gpu\": 1.5}")),
             Catch::Contains("expected a whole number"));
  CHECK_THAT(problems(fs::temp_directory_path() / "vramsim_no_such_ds_config.json"),
             Catch::Contains("vramsim_no_such_ds_config.json: parallel.deepspeed_config: no "
                             "such file"));
  // A setting the scenario also gives must agree with the configuration.
  const fs::path mb = write_config("mb.json", "{\"train_micro_batch_size_per_gpu\": 4}");
  CHECK_THAT(problems(mb, "[batch]\nmicro_batch = 2\n"),
             Catch::Contains("sets 2 but the DeepSpeed configuration sets 4"));
  CHECK(problems(mb, "[batch]\nmicro_batch = 4\n").empty());
  // The configuration is DeepSpeed's: another framework contradicts it.
  CHECK_THAT(problems(mb, "framework = \"pytorch\"\n"),
             Catch::Contains("sets \"pytorch\" but the DeepSpeed configuration sets "
                             "\"deepspeed\""));
  // Accumulation steps that contradict the global batch.
  const fs::path gas = write_config("gas.json", "{\"train_micro_batch_size_per_gpu\": 1, "
                                                "\"gradient_accumulation_steps\": 2, "
                                                "\"train_batch_size\": 32}");
  CHECK_THAT(problems(gas), Catch::Contains("gradient_accumulation_steps 2 x micro-batch 1 x 8"));
}
