// Step time against Megatron-LM's published iteration times: Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models" (arXiv:2205.05198), Table 5, for the four
// GPT models of its Table 3 (22B, 175B, 530B, 1T) on Selene's DGX A100 80 GB nodes (8 GPUs per
// node on NVLink, InfiniBand between nodes), sequence 2048, TP 8, data-parallel size 1, each
// under full recompute and under selective recompute + sequence parallelism, with Table 3's
// micro-batch and pipeline schedule.
// The rows, their columns and their source: tests/validation/korthikanti2022_table5.csv and
// tests/validation/README.md. Nothing in the simulator was fitted to them (used_for_fitting = no
// for every row); the bounds below are what the simulation achieves today, so a change that
// makes it worse fails, and they are tightened as it improves.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"
#include "tests/validation/validation_table.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

const std::filesystem::path& kValidation = vramsim::testing::kValidationDir;

const std::vector<std::string> kColumns = {
    "case",        "model_file",  "gpu",           "num_gpus",
    "gpus_per_node", "tp",        "pp",            "global_batch",
    "micro_batch", "seq_len",     "checkpointing", "sequence_parallel",
    "schedule",    "pp_interleave", "published_iteration_s", "used_for_fitting", "source"};

using Row = vramsim::testing::ValidationRow;

std::vector<Row> read_rows() {
  return vramsim::testing::read_validation_table("korthikanti2022_table5.csv", kColumns);
}

TrainingSetup setup_of(const Row& r) {
  TrainingPlan plan;
  plan.num_gpus = static_cast<int>(r.integer("num_gpus"));
  plan.gpus_per_node = static_cast<int>(r.integer("gpus_per_node"));
  plan.tp = static_cast<int>(r.integer("tp"));
  plan.pp = static_cast<int>(r.integer("pp"));
  plan.strategy = Strategy::kDdp;  // data-parallel size 1: nothing to shard or reduce
  plan.precision = Precision::kBf16Mixed;
  plan.optimizer = Optimizer::kAdam;
  plan.schedule = *pipeline_schedule_from_string(r.field.at("schedule"));
  plan.pp_interleave = static_cast<int>(r.integer("pp_interleave"));
  plan.micro_batch = r.integer("micro_batch");
  plan.global_batch = r.integer("global_batch");
  plan.seq_len = r.integer("seq_len");
  plan.checkpointing = *checkpointing_from_string(r.field.at("checkpointing"));
  plan.sequence_parallel = r.field.at("sequence_parallel") == "true";
  // Megatron-LM as the paper ran it: fused memory-bound kernels, attention as GEMMs + softmax.
  plan.kernels = Kernels::kMegatron;
  plan.attention = Attention::kEager;
  return vramsim::testing::zoo_setup((kValidation / "models" / r.field.at("model_file")).string(),
                                     r.field.at("gpu"), plan);
}

}  // namespace

TEST_CASE("Megatron-LM's Table 5 iteration times of the 22B to 1T GPT models are reproduced",
          "[training][validation][megatron]") {
  const std::vector<Row> rows = read_rows();
  REQUIRE(rows.size() == 8);
  double sum_abs = 0, max_abs = 0;
  for (const Row& r : rows) {
    CAPTURE(r.field.at("case"));
    CHECK(r.field.at("used_for_fitting") == "no");
    const TrainingSetup s = setup_of(r);
    ValidationReport report;
    s.plan.validate(report);
    s.plan.validate_for_model(s.model, report);
    REQUIRE(report.ok());
    const TrainingResult res = simulate_training(s, {.num_steps = 2, .record_timeline = false});
    const double published = r.number("published_iteration_s");
    const double simulated = res.step_time.seconds();
    const double err = simulated / published - 1.0;
    const DeviceResult& d = res.devices.front();
    WARN(fmt::format("{:>18}: published {:6.2f} s, simulated {:7.3f} s, error {:+6.1f} % "
                     "(stage 0: compute {:.3f} s, tp {:.3f} s, exposed comm {:.3f} s, "
                     "bubble {:.3f} s)",
                     r.field.at("case"), published, simulated, 100.0 * err,
                     d.compute.seconds(), d.tp_comm.seconds(), d.exposed_comm.seconds(),
                     d.bubble.seconds()));
    sum_abs += std::abs(err);
    max_abs = std::max(max_abs, std::abs(err));
  }
  const double mean_abs = sum_abs / static_cast<double>(rows.size());
  WARN(fmt::format("Table 5: mean |error| {:.2f} %, max |error| {:.2f} %", 100.0 * mean_abs,
                   100.0 * max_abs));
  // What the simulation achieves (see the note at the top): 4.80 % mean, 9.29 % max (22B
  // selective + SP 9.3 % fast, 1T full recompute 5.7 % slow), with Table 3's settings as
  // corrected on 2026-12-04 (22B one micro-batch of 4; 175B and 530B interleaved, 3 chunks per
  // device). With the earlier entry (22B four micro-batches of 1, no interleaving) it was 4.97 %
  // / 8.71 %; before the Megatron kernels, eager attention, the TP overlap and Megatron's
  // optimizer step were modelled, 10.3 % / 17.9 %. The errors grow with the GEMMs' size (22B
  // and 175B fast, 530B near, 1T slow) under one flat matrix efficiency. The target is 3 % mean,
  // 6 % max.
  CHECK(mean_abs <= 0.049);
  CHECK(max_abs <= 0.094);
}
