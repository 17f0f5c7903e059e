// Step time of DeepSpeed's offloaded optimizer step (ZeRO-Offload) against a published
// measurement (issue 17): the training log DeepSpeed's ZeRO-Offload tutorial shows for its 10B
// GPT-2 (Megatron-LM, 50 layers, hidden 4096, micro-batch 10, sequence 1024, fp16, full
// activation checkpointing) on one V100-SXM3-32GB of a DGX-2, ZeRO-2 with cpu_offload and
// DeepSpeedCPUAdam, read from the screenshot's wall_clock_breakdown timers.
// The rows, their columns and their source: tests/validation/deepspeed_tutorial_offload.csv and
// tests/validation/README.md. Nothing in the simulator was fitted to them (used_for_fitting = no
// on every row; the CPU Adam rate stays the assumed default, kCpuAdamParamsPerSecond); the
// bounds below are what the simulation achieves today, so a change that makes it worse fails.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
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
    "case",          "model_file",         "gpu",
    "num_gpus",      "strategy",           "offload_optimizer",
    "precision",     "optimizer",          "micro_batch",
    "seq_len",       "checkpointing",      "reduce_bucket_size",
    "published_iteration_s", "published_forward_s", "published_backward_s",
    "published_optimizer_s", "used_for_fitting",   "source"};

using Row = vramsim::testing::ValidationRow;

template <typename T>
T parsed(const Row& r, const std::string& column, std::optional<T> value) {
  if (!value) FAIL(fmt::format("{}:{}: {}: unknown '{}'", r.file, r.line, column, r.at(column)));
  return *value;
}

TrainingSetup setup_of(const Row& r) {
  TrainingPlan plan;
  plan.num_gpus = static_cast<int>(r.integer("num_gpus"));
  plan.gpus_per_node = plan.num_gpus;
  plan.strategy = parsed(r, "strategy", strategy_from_string(r.at("strategy")));
  plan.offload_optimizer = true;
  plan.offload_optimizer_device =
      parsed(r, "offload_optimizer", offload_device_from_string(r.at("offload_optimizer")));
  plan.precision = parsed(r, "precision", precision_from_string(r.at("precision")));
  plan.optimizer = parsed(r, "optimizer", optimizer_from_string(r.at("optimizer")));
  plan.micro_batch = r.integer("micro_batch");
  plan.global_batch = plan.micro_batch * plan.num_gpus;  // gradient_accumulation_steps 1
  plan.seq_len = r.integer("seq_len");
  plan.checkpointing =
      parsed(r, "checkpointing", checkpointing_from_string(r.at("checkpointing")));
  // DeepSpeed 0.3's zero_optimization as the config sets it: reduce_bucket_size given,
  // contiguous_gradients and overlap_comm left at their defaults (off).
  plan.reduce_bucket_size = r.integer("reduce_bucket_size");
  plan.contiguous_gradients = false;
  plan.overlap_comm = false;
  // Megatron-LM's GPT-2 of 2020: attention as batched GEMMs + softmax, dropout 0.1.
  plan.kernels = Kernels::kMegatron;
  plan.attention = Attention::kEager;
  return vramsim::testing::zoo_setup((kValidation / "models" / r.at("model_file")).string(),
                                     r.at("gpu"), plan);
}

}  // namespace

TEST_CASE("ZeRO-Offload's published 10B GPT-2 step on one V100 is reproduced",
          "[training][validation][offload]") {
  const std::vector<Row> rows =
      vramsim::testing::read_validation_table("deepspeed_tutorial_offload.csv", kColumns);
  REQUIRE(rows.size() == 1);
  double sum_abs = 0, max_abs = 0;
  for (const Row& r : rows) {
    CAPTURE(r.at("case"));
    CHECK(r.at("used_for_fitting") == "no");
    const TrainingSetup s = setup_of(r);
    ValidationReport report;
    s.plan.validate(report);
    s.plan.validate_for_model(s.model, report);
    REQUIRE(report.ok());
    // DeepSpeed's ZeRO-2 over Megatron-LM's kernels: DeepSpeed's buffers and buckets apply.
    CHECK(s.plan.framework_in_use() == Framework::kDeepspeed);
    const TrainingResult res = simulate_training(s, {.num_steps = 2, .record_timeline = false});
    const double published = r.number("published_iteration_s");
    const double simulated = res.step_time.seconds();
    const double err = simulated / published - 1.0;
    const DeviceResult& d = res.devices.front();
    const StagePlan& st = res.stages.front();
    // The phases as DeepSpeed's wall_clock_breakdown timed them: forward and backward (which
    // under ZeRO-Offload includes the gradients' copies to the host), then the optimizer step
    // (the host's gradient handling, CPU Adam, the updated fp16 parameters back to the device).
    // Printed beside the modelled compute and offloaded step, not bounded: the phases do not
    // map one to one.
    const double published_fwd_bwd =
        r.number("published_forward_s") + r.number("published_backward_s");
    WARN(fmt::format(
        "{}: published {:.2f} s, simulated {:.2f} s, error {:+.1f} %\n"
        "  published: forward {:.3f} s + backward {:.3f} s = {:.3f} s, optimizer {:.3f} s\n"
        "  simulated: compute {:.3f} s ({:+.1f} % against forward + backward), offloaded step "
        "{:.3f} s ({:+.1f} % against optimizer: host link {:.3f} s, CPU Adam {:.3f} s over {} "
        "parameters), exposed comm {:.3f} s\n"
        "  device peak reserved {:.2f} GiB of {:.2f} GiB (fits: {}), host state {:.2f} GiB",
        r.at("case"), published, simulated, 100.0 * err, r.number("published_forward_s"),
        r.number("published_backward_s"),
        published_fwd_bwd, r.number("published_optimizer_s"), d.compute.seconds(),
        100.0 * (d.compute.seconds() / published_fwd_bwd - 1.0), st.offload.seconds(),
        100.0 * (st.offload.seconds() / r.number("published_optimizer_s") - 1.0),
        st.offload_pcie.seconds(), st.offload_cpu.seconds(), st.num_params,
        d.exposed_comm.seconds(), d.peak_reserved.gib(), d.capacity.gib(), d.fits,
        st.host_state.gib()));
    sum_abs += std::abs(err);
    max_abs = std::max(max_abs, std::abs(err));
  }
  const double mean_abs = sum_abs / static_cast<double>(rows.size());
  WARN(fmt::format("ZeRO-Offload step time: mean |error| {:.2f} %, max |error| {:.2f} %",
                   100.0 * mean_abs, 100.0 * max_abs));
  // What the simulation achieves today (see the note at the top): 8.89 % (23.93 s simulated
  // against 26.26 s), from errors that partly cancel: the device's forward + backward is
  // modelled 40 % faster than the log's, the offloaded step (host link + CPU Adam at the
  // assumed 1e9 parameters/s) 65 % slower than its optimizer phase.
  CHECK(mean_abs <= 0.090);
  CHECK(max_abs <= 0.090);
}
