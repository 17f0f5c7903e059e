// Per-layer time against Megatron-LM's published measurements: Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models" (arXiv:2205.05198), Table 4: the forward
// and backward time of one transformer layer of the 22B GPT model of Table 3 (hidden 6144, 64
// heads, sequence 2048, micro-batch 4, tensor-parallel size 8 on a DGX A100 80 GB node), under
// no recompute, sequence parallelism, full recompute, selective recompute, and selective
// recompute with sequence parallelism. The backward time includes what is recomputed.
// The rows and their source: tests/validation/korthikanti2022_table4.csv and
// tests/validation/README.md. Nothing in the simulator was fitted to them; the bounds are what
// the simulation achieves today, so a change that makes it worse fails.
//
// A layer's time is read off the simulated timeline as the time from the start of that layer's
// first op in a pass to the start of the next layer's first op in the same pass (forward: layer
// k to k + 1; backward: k to k - 1), in the second step, micro-batch 0: everything the compute
// stream spends on the layer, its blocking TP collectives included, and nothing hidden behind
// it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
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

using Row = vramsim::testing::ValidationRow;

const std::vector<std::string> kColumns = {
    "case", "checkpointing", "sequence_parallel", "published_forward_ms",
    "published_backward_ms", "used_for_fitting", "source"};

TrainingSetup setup_of(const Row& r) {
  TrainingPlan plan;
  plan.num_gpus = 8;
  plan.gpus_per_node = 8;
  plan.tp = 8;
  plan.pp = 1;
  plan.strategy = Strategy::kDdp;  // data-parallel size 1
  plan.precision = Precision::kBf16Mixed;
  plan.optimizer = Optimizer::kAdam;
  plan.micro_batch = 4;  // Table 3's 22B row: global batch 4, micro-batch 4
  plan.global_batch = 4;
  plan.seq_len = 2048;
  plan.checkpointing = *checkpointing_from_string(r.at("checkpointing"));
  plan.sequence_parallel = r.at("sequence_parallel") == "true";
  plan.kernels = Kernels::kMegatron;
  plan.attention = Attention::kEager;
  return vramsim::testing::zoo_setup(
      (vramsim::testing::kValidationDir / "models" / "megatron-gpt-22b.json").string(),
      "a100-sxm-80g", plan);
}

/// The earliest start, in ns, of the ops of `layer` in the given pass of step 1, micro-batch 0.
std::int64_t first_start(const TrainingResult& res, int layer, bool backward) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (const OpRecord& rec : res.ops) {
    const Op& op = res.graph.ops[static_cast<std::size_t>(rec.op)];
    if (op.step != 1 || op.micro_batch != 0 || op.layer != layer) continue;
    const bool in_backward = op.kind == OpKind::kRecompute || op.kind == OpKind::kBackward ||
                             (op.kind == OpKind::kTpComm && op.backward_pass);
    const bool in_forward = op.kind == OpKind::kForward ||
                            (op.kind == OpKind::kTpComm && !op.backward_pass);
    if (backward ? in_backward : in_forward) first = std::min(first, rec.start_ns);
  }
  REQUIRE(first != std::numeric_limits<std::int64_t>::max());
  return first;
}

}  // namespace

TEST_CASE("Megatron-LM's Table 4 per-layer forward and backward times of the 22B GPT",
          "[training][validation][megatron]") {
  const std::vector<Row> rows =
      vramsim::testing::read_validation_table("korthikanti2022_table4.csv", kColumns);
  REQUIRE(rows.size() == 5);
  constexpr int kLayer = 24;  // a middle layer of 48: neither the embedding's nor the head's
  double sum_abs = 0, max_abs = 0;
  int n = 0;
  for (const Row& r : rows) {
    CAPTURE(r.at("case"));
    CHECK_FALSE(r.used_for_fitting());
    const TrainingSetup s = setup_of(r);
    ValidationReport report;
    s.plan.validate(report);
    s.plan.validate_for_model(s.model, report);
    REQUIRE(report.ok());
    const TrainingResult res = simulate_training(s, {.num_steps = 2, .record_timeline = true});
    const double fwd_ms =
        1e-6 * static_cast<double>(first_start(res, kLayer + 1, false) -
                                   first_start(res, kLayer, false));
    const double bwd_ms =
        1e-6 * static_cast<double>(first_start(res, kLayer - 1, true) -
                                   first_start(res, kLayer, true));
    const double pub_fwd = r.number("published_forward_ms");
    const double pub_bwd = r.number("published_backward_ms");
    const double err_fwd = fwd_ms / pub_fwd - 1.0;
    const double err_bwd = bwd_ms / pub_bwd - 1.0;
    const double err_sum = (fwd_ms + bwd_ms) / (pub_fwd + pub_bwd) - 1.0;
    WARN(fmt::format("{:>18}: forward {:5.2f} / {:4.1f} ms ({:+5.1f} %), backward {:5.2f} / "
                     "{:4.1f} ms ({:+5.1f} %), combined {:+5.1f} %",
                     r.at("case"), fwd_ms, pub_fwd, 100.0 * err_fwd, bwd_ms, pub_bwd,
                     100.0 * err_bwd, 100.0 * err_sum));
    for (const double e : {err_fwd, err_bwd}) {
      sum_abs += std::abs(e);
      max_abs = std::max(max_abs, std::abs(e));
      ++n;
    }
  }
  const double mean_abs = sum_abs / n;
  WARN(fmt::format("Table 4: mean |error| {:.2f} %, max |error| {:.2f} % over {} times",
                   100.0 * mean_abs, 100.0 * max_abs, n));
  // What the simulation achieves: 4.04 % mean, 7.61 % max, every time low. Forward -2.4 % (no
  // sequence parallelism) and -3.4 % (with it); backward -4.0 % (no recompute), -6.2 % (sequence
  // parallelism: the model saves 1.1 ms of LayerNorm and dropout backward where the paper shows
  // 0.1 ms), -2.9 % (full recompute), -5.7 % (selective: 1.04 ms of attention recomputed against
  // the paper's 1.3 ms), -7.6 % (selective + sequence parallelism). The target is 3 %.
  CHECK(mean_abs <= 0.041);
  CHECK(max_abs <= 0.077);
}
