// LoRA and QLoRA runs against torchtune's published peak memory and throughput: the table
// "Memory and training speed" of pytorch/torchtune's README.md (commit 0031bfb0; Llama 3.1 8B on
// one RTX 4090 or RTX A6000, 70B and 405B on 8 A100s; batch size 2, packed sequences of 2048
// tokens, torch.compile). The rows, their settings and what was inferred:
// tests/validation/torchtune_lora_memory.csv and tests/validation/README.md. Nothing was fitted
// to them (used_for_fitting = no). The bounds below are the errors this commit achieves, so a
// change that makes them worse fails (korthikanti_table5_test.cpp does the same).
#include <cmath>
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
    "case",          "model",          "gpu",           "num_gpus",
    "strategy",      "lora_rank",      "lora_alpha",    "lora_targets",
    "base_quant",    "precision",      "checkpointing", "loss",          "micro_batch",
    "seq_len",       "published_peak", "published_peak_unit",
    "published_tokens_per_s",  "used_for_fitting", "source"};

std::vector<vramsim::testing::ValidationRow> read_rows(const std::string& file) {
  return vramsim::testing::read_validation_table(file, kColumns);
}

// The row as a training scenario (the lists use ';' in the CSV, ',' in the scenario).
training::TrainingSetup setup_of(const vramsim::testing::ValidationRow& r) {
  std::string targets = r.at("lora_targets");
  for (char& c : targets) {
    if (c == ';') c = ',';
  }
  return vramsim::testing::training_setup_of_row(
      r,
      "[model]\nid = \"{model}\"\n[hardware]\ngpu = \"{gpu}\"\nnum_gpus = {num_gpus}\n"
      "[parallel]\nstrategy = \"{strategy}\"\n"
      "[batch]\nmicro_batch = {micro_batch}\nseq_len = {seq_len}\n"
      "[memory]\nprecision = \"{precision}\"\ncheckpointing = \"{checkpointing}\"\n"
      "loss = \"{loss}\"\n"
      "[lora]\nrank = {lora_rank}\nalpha = {lora_alpha}\ntargets = \"{targets}\"\n"
      "base_quant = \"{base_quant}\"\n",
      {{"targets", targets}});
}

}  // namespace

TEST_CASE("torchtune's LoRA and QLoRA peak memory and tokens/s are reproduced",
          "[run][training][lora][validation]") {
  const auto rows = read_rows("torchtune_lora_memory.csv");
  REQUIRE(rows.size() == 5);
  double mem_sum = 0, mem_max = 0, tps_sum = 0, tps_max = 0;
  for (const auto& r : rows) {
    CAPTURE(r.at("case"));
    CHECK(r.at("used_for_fitting") == "no");
    const training::TrainingSetup s = setup_of(r);
    const training::TrainingResult res =
        training::simulate_training(s, {.num_steps = 2, .record_timeline = false});
    const training::DeviceResult* d = run::binding_device(res);
    REQUIRE(d != nullptr);
    const double unit = r.at("published_peak_unit") == "GiB" ? 1024.0 * 1024.0 * 1024.0 : 1e9;
    const double published_bytes = r.number("published_peak") * unit;
    const double simulated_bytes = static_cast<double>(d->peak_reserved.count());
    const double mem_err = simulated_bytes / published_bytes - 1.0;
    const double published_tps = r.number("published_tokens_per_s");
    // The README's column is "Tokens/sec", read as the job's total (a per-GPU reading would
    // make the two 8-GPU rows 8x faster than their FLOPs allow on A100s).
    const double simulated_tps = res.tokens_per_s;
    const double tps_err = simulated_tps / published_tps - 1.0;
    WARN(fmt::format("{:>28}: peak reserved {:6.2f} GiB (allocated {:6.2f}) vs {} {} "
                     "({:+6.1f} %), {:7.0f} vs {} tokens/s ({:+6.1f} %), fits {}",
                     r.at("case"), simulated_bytes / (1024.0 * 1024.0 * 1024.0),
                     static_cast<double>(d->peak_allocated.count()) / (1024.0 * 1024.0 * 1024.0),
                     r.at("published_peak"), r.at("published_peak_unit"), 100.0 * mem_err,
                     simulated_tps, r.at("published_tokens_per_s"), 100.0 * tps_err,
                     res.fits));
    // Each ran on that hardware: the simulation must say it fits.
    CHECK(res.fits);
    mem_sum += std::abs(mem_err);
    mem_max = std::max(mem_max, std::abs(mem_err));
    tps_sum += std::abs(tps_err);
    tps_max = std::max(tps_max, std::abs(tps_err));
  }
  const double n = static_cast<double>(rows.size());
  WARN(fmt::format("torchtune: peak memory mean |error| {:.1f} %, max {:.1f} %; tokens/s mean "
                   "|error| {:.1f} %, max {:.1f} %",
                   100.0 * mem_sum / n, 100.0 * mem_max, 100.0 * tps_sum / n, 100.0 * tps_max));
  // This commit: peak memory 24.1 % mean |error|, max 57.2 % (every row still high; each runs
  // its config's loss, --loss: chunked:8 for the 8B and 70B rows, which took the mean from
  // 37.3 % to 19.0 %; the 405B row's config of that release used torch.nn.CrossEntropyLoss
  // with compile off, modelled as full, and stays the worst). FSDP's root unit (the embedding
  // and output, which those configs leave to the root: custom_sharded_layers is commented out)
  // is now kept unsharded from forward to backward as FSDP2 does, which took the two FSDP rows
  // from +8.4 % / +42.1 % to +18.9 % / +57.2 %: the other terms of those rows are too high by
  // more than was thought. tokens/s 23.0 % mean, max 49.1 % (the single consumer GPUs are slow
  // in the datasheet roofline; the two 8 x A100 rows are within 3 %).
  // Then the caching allocator was fed one request per tensor (issue 13): peak memory 25.3 %
  // mean |error| (+1.2 points), max 53.2 % (-4.0): 8B LoRA 4090 +8.9 -> +12.4 %, A6000 +23.0 ->
  // +22.6 %, QLoRA 4090 +12.4 -> +17.3 %, 70B +18.9 -> +20.9 %, 405B +57.2 -> +53.2 %. The mean
  // bound is loosened by 1 point: the single-GPU rows' allocated peaks were already above the
  // published figures (8B LoRA 4090: 17.47 GiB allocated vs 16.2 published), and their reserve
  // above the allocation, 0.18 GiB when one lump per layer was reused whole, is now 0.75 GiB,
  // within the 0.5 to 1.8 GiB issue 13 expects of PyTorch's fragmentation; nothing was fitted.
  CHECK(mem_sum / n <= 0.255);
  CHECK(mem_max <= 0.535);
  CHECK(tps_sum / n <= 0.24);
  CHECK(tps_max <= 0.50);
}
