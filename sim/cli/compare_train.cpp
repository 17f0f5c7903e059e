#include "sim/cli/compare_train.hpp"

#include <fmt/format.h>

namespace vramsim::cli {
namespace {

constexpr FlagForPath kFlags[] = {
    {"compare.num_gpus", "--num-gpus", ""},
    {"compare.price_per_gpu_hour", "--gpu-price-per-hour", ""},
};

ValidationReport by_flags(const ValidationReport& report) {
  return named_by_flags(report, run::train_option_rows(), std::span<const FlagForPath>(kFlags));
}

}  // namespace

CompareTrainAnswer compare_train(const CompareTrainFlags& f) {
  CompareTrainAnswer c;
  try {
    run::TrainScenario sc;
    if (!f.train.scenario.empty()) sc = run::load_train_scenario(f.train.scenario);
    c = run::compare_train({.options = run::resolve_train_options(sc, f.train.given_values()),
                            .num_gpus = f.num_gpus,
                            .price_per_gpu_hour = f.price_per_gpu_hour});
  } catch (const ConfigError& e) {
    throw ConfigError(by_flags(e.report()));
  }
  for (TrainOption& o : c.options) {
    if (o.valid) continue;
    ValidationReport why;
    why.error(o.problem.field, o.problem.message, o.problem.where);
    const Problem named = by_flags(why).problems().front();
    o.reason = named.field + ": " + named.message;
  }
  return c;
}

std::string compare_train_table(const CompareTrainAnswer& c) {
  const training::TrainingSetup& s = c.options.front().setup;
  std::string out = fmt::format("{} on {}: micro-batch {} x {} tokens, every option at a global "
                                "batch of {} sequences per step\n",
                                s.model.name, s.device.name, s.plan.micro_batch, s.plan.seq_len,
                                c.global_batch);
  if (!c.batch_note.empty()) out += fmt::format("Note: {}.\n", c.batch_note);
  out += "\n";
  out += fmt::format("{:<16}{:>5}{:>6}{:>8}{:>14}{:>14}{:>10}{:>12}{:>7}{:>8}\n", "option",
                     "GPUs", "fits", "accum", "peak alloc", "peak total", "step (s)", "tokens/s",
                     "MFU", "speed");
  for (const TrainOption& o : c.options) {
    if (!o.valid) {
      out += fmt::format("{:<16}{:>5}  not possible: {}\n", o.name, o.num_gpus, o.reason);
      continue;
    }
    out += fmt::format("{:<16}{:>5}{:>6}{:>8}{:>14}{:>14}{:>10.3f}{:>12.0f}{:>6.1f}%{:>8}\n",
                       o.name, o.num_gpus, o.result.fits ? "yes" : "NO",
                       o.setup.plan.num_micro_batches(),
                       format_bytes(run::peak_allocated(o.result)),
                       format_bytes(run::peak_reserved(o.result)), o.result.step_time.seconds(),
                       o.result.tokens_per_s, 100.0 * o.result.mfu,
                       o.speedup > 0.0 ? fmt::format("{:.2f}x", o.speedup) : "-");
  }
  out += fmt::format("\nVerdict: {}.\n", c.verdict);
  return out;
}

}  // namespace vramsim::cli
