// QLoRA's memory claims (Dettmers, Pagnoni, Holtzman, Zettlemoyer 2023, "QLoRA: Efficient
// Finetuning of Quantized LLMs", arXiv:2305.14314): a 65B model fine-tuned on one 48 GB GPU and
// Guanaco-33B on 24 GB consumer GPUs, with NF4 + double quantization, LoRA r = 64 on every
// linear layer, bf16 compute, gradient checkpointing and paged optimizers, as the paper's
// scripts set them (rows, settings, sources: tests/validation/qlora2023_memory_claims.csv and
// tests/validation/README.md). Held out: nothing was fitted to them. Each claim is a yes/no:
// the simulation must agree that the run fits the GPU; the peaks are printed.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_scenario.hpp"
#include "tests/validation/validation_table.hpp"

using namespace vramsim;

namespace {

const std::filesystem::path& kValidation = vramsim::testing::kValidationDir;

const std::vector<std::string> kColumns = {
    "case",         "model_file",      "gpu",        "lora_rank",     "lora_alpha",
    "lora_dropout", "lora_targets",    "base_quant", "double_quant",  "precision",
    "paged_optimizer", "checkpointing", "micro_batch", "seq_len",     "published_fits",
    "used_for_fitting", "source"};

training::TrainingSetup setup_of(const vramsim::testing::ValidationRow& r, bool paged) {
  return vramsim::testing::training_setup_of_row(
      r,
      "[model]\nid = \"{model_path}\"\n[hardware]\ngpu = \"{gpu}\"\n"
      "[batch]\nmicro_batch = {micro_batch}\nseq_len = {seq_len}\n"
      "[memory]\nprecision = \"{precision}\"\ncheckpointing = \"{checkpointing}\"\n"
      "paged_optimizer = {paged}\n"
      "[lora]\nrank = {lora_rank}\nalpha = {lora_alpha}\ndropout = {lora_dropout}\n"
      "targets = \"{lora_targets}\"\nbase_quant = \"{base_quant}\"\n"
      "double_quant = {double_quant}\n",
      {{"model_path", (kValidation / "models" / r.at("model_file")).string()},
       {"paged", paged ? "true" : "false"}});
}

}  // namespace

TEST_CASE("QLoRA's 65B on one 48 GB GPU and 33B on 24 GB are reproduced as fitting",
          "[run][training][qlora][validation]") {
  int rows = 0;
  for (const vramsim::testing::ValidationRow& r :
       vramsim::testing::read_validation_table("qlora2023_memory_claims.csv", kColumns)) {
    ++rows;
    CAPTURE(r.at("case"));
    CHECK(r.at("used_for_fitting") == "no");
    const bool paged = r.at("paged_optimizer") == "true";
    const training::TrainingResult res = training::simulate_training(
        setup_of(r, paged), {.num_steps = 2, .record_timeline = false});
    const training::DeviceResult* d = run::binding_device(res);
    REQUIRE(d != nullptr);
    // The same run with its optimizer states on the device, for the record.
    const training::TrainingResult unpaged = training::simulate_training(
        setup_of(r, false), {.num_steps = 2, .record_timeline = false});
    const training::DeviceResult* u = run::binding_device(unpaged);
    REQUIRE(u != nullptr);
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    WARN(fmt::format("{:>26}: needs {:6.2f} GiB of {:6.2f} GiB (paged optimizer states on the "
                     "host: {:5.2f} GiB; unpaged it needs {:6.2f} GiB), fits {} (published {})",
                     r.at("case"),
                     static_cast<double>((d->peak_reserved + d->non_allocator).count()) / kGiB,
                     static_cast<double>(d->capacity.count()) / kGiB,
                     static_cast<double>(res.stages.front().host_state.count()) / kGiB,
                     static_cast<double>((u->peak_reserved + u->non_allocator).count()) / kGiB,
                     res.fits, r.at("published_fits")));
    CHECK(res.fits == (r.at("published_fits") == "yes"));
  }
  CHECK(rows == 4);
}
