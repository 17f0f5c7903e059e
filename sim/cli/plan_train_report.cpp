#include "sim/cli/plan_train_report.hpp"

#include <fmt/format.h>

#include <vector>

#include "sim/run/plan_train_results.hpp"

namespace vramsim::cli {

namespace {

double gib(Bytes b) { return static_cast<double>(b.count()) / (1 << 30); }

std::string plans_table(const run::PlanTrainAnswer& a, const std::vector<std::size_t>& which) {
  // CP and EP columns only when the search tried them.
  const bool cp_ep = a.space.cps != std::vector<std::int64_t>{1} ||
                     a.space.eps != std::vector<std::int64_t>{1};
  std::string out = fmt::format("{:>4}  {:<13}{:>3}{:>4}{:>4}", "#", "strategy", "TP", "PP", "DP");
  if (cp_ep) out += fmt::format("{:>4}{:>4}", "CP", "EP");
  out += fmt::format("{:>5}{:>5}  {:<14}{:<8}{:>9}{:>11}{:>10}{:>14}{:>7}\n", "mb", "GA",
                     "checkpointing", "offload", "step s", "tokens/s", "peak GiB",
                     "headroom GiB", "MFU");
  for (const std::size_t i : which) {
    const run::PlanTrainRow& r = a.rows[i];
    out += fmt::format("{:>4}  {:<13}{:>3}{:>4}{:>4}", r.index, training::to_string(r.strategy),
                       r.tp, r.pp, r.dp);
    if (cp_ep) out += fmt::format("{:>4}{:>4}", r.cp, r.ep);
    out += fmt::format("{:>5}{:>5}  {:<14}{:<8}{:>9.3f}{:>11.0f}{:>10.2f}{:>14.2f}{:>7.3f}\n",
                       r.micro_batch, r.num_micro_batches, training::to_string(r.checkpointing),
                       r.offload_optimizer ? "yes" : "no", r.step_time.seconds(), r.tokens_per_s,
                       gib(r.peak), gib(r.headroom), r.mfu);
  }
  // The strategies each listed plan stands for (same layout, same simulated step and memory).
  for (const std::size_t i : which) {
    const auto it = a.equivalent.find(i);
    if (it == a.equivalent.end()) continue;
    std::string others;
    for (const std::size_t k : it->second) {
      others += fmt::format("{}{} (#{})", others.empty() ? "" : ", ",
                            training::to_string(a.rows[k].strategy), a.rows[k].index);
    }
    out += fmt::format("  #{} {} also stands for {}: the same step time and memory\n",
                       a.rows[i].index, training::to_string(a.rows[i].strategy), others);
  }
  return out;
}

}  // namespace

std::string plan_train_table(const run::PlanTrainAnswer& a) {
  const training::TrainingPlan& p = a.base.plan;
  const run::PlanTrainCounts& c = a.counts;
  std::string out = fmt::format(
      "{} on {} x {} ({:.1f} GiB each), global batch {} x {} tokens ({} tokens per step), {}, "
      "{}\n",
      a.base.model.name, p.num_gpus, a.base.device.id, gib(a.base.device.memory_total),
      a.global_batch, p.seq_len, a.global_batch * p.seq_len, training::to_string(p.precision),
      training::to_string(p.optimizer));
  if (p.samples) {
    out += fmt::format("samples: {} lengths, mean {:.0f} tokens of data per sequence ({}); "
                       "tokens/s count data, not padding\n",
                       p.samples->num_samples(), p.data_tokens_per_sequence(),
                       p.pads_samples() ? "padded to each micro-batch's longest: the padding "
                                          "depends on the micro-batch"
                                        : fmt::format("{} packing", to_string(p.packing)));
  }
  out += fmt::format(
      "searched {} plans: {} simulated ({} fit, {} do not fit{}); skipped {}: {} global batch "
      "not a multiple of dp x micro-batch, {} not valid for the model or cluster, {} sharded at "
      "dp 1 (the same as ddp)\n",
      c.num_plans, c.num_simulated, c.num_fit, c.num_not_fit,
      c.num_resumed > 0 ? fmt::format("; {} from the earlier run's journal", c.num_resumed) : "",
      c.num_skipped_batch + c.num_skipped_invalid + c.num_skipped_same_as_ddp,
      c.num_skipped_batch, c.num_skipped_invalid, c.num_skipped_same_as_ddp);
  if (!a.fastest.empty()) {
    out += fmt::format("\nFastest {} plans that fit (GA: gradient accumulation steps, "
                       "micro-batches per step per DP rank)\n",
                       a.fastest.size());
    out += plans_table(a, a.fastest);
    out += fmt::format("\nPareto front, step time against memory headroom ({} plans: none "
                       "both faster and with more headroom)\n",
                       a.pareto.size());
    out += plans_table(a, a.pareto);
  } else if (a.closest) {
    out += "\nClosest to fitting\n";
    out += plans_table(a, {*a.closest});
  }
  out += "\n" + run::plan_train_message(a) + "\n";
  return out;
}

}  // namespace vramsim::cli
