#include "sim/run/compare_train_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/run/train_run.hpp"

namespace vramsim::run {
namespace {

TrainOption run_option(std::string name, const training::TrainingSetup& base, int num_gpus,
                       training::Strategy strategy, int tp, int cp = 1, int ep = 1) {
  TrainOption o;
  o.name = std::move(name);
  o.num_gpus = num_gpus;
  o.setup = base;  // its global batch is the comparison's
  training::TrainingPlan& p = o.setup.plan;
  p.num_gpus = num_gpus;
  p.gpus_per_node = std::min(base.plan.gpus_per_node, num_gpus);
  p.strategy = strategy;
  p.tp = tp;
  p.pp = 1;
  p.cp = cp;
  p.cp_comm = training::CpComm::kRing;
  p.ep = ep;
  if (tp == 1) p.sequence_parallel = false;
  ValidationReport report;
  p.validate(report);
  if (report.ok()) p.validate_for_model(o.setup.model, report);
  if (!report.ok()) {
    o.problem = report.problems().front();
    o.reason = o.problem.field + ": " + o.problem.message;
    return o;
  }
  o.valid = true;
  o.result = training::simulate_training(o.setup, {.num_steps = 2, .record_timeline = false});
  return o;
}

std::string verdict(const CompareTrainAnswer& c) {
  const TrainOption& one = c.options.front();
  const TrainOption* best = nullptr;
  for (const TrainOption& o : c.options) {
    if (o.num_gpus < 2 || !o.valid || !o.result.fits) continue;
    if (best == nullptr || o.result.tokens_per_s > best->result.tokens_per_s) best = &o;
  }
  const int n = c.options.back().num_gpus;
  if (best == nullptr) {
    return fmt::format("no plan on {} GPUs fits: more GPUs, a smaller micro-batch or more "
                       "checkpointing are needed",
                       n);
  }
  if (!one.valid || !one.result.fits) {
    return fmt::format("the job does not fit one GPU (peak {}); on {} GPUs {} fits and runs "
                       "fastest: {:.0f} tokens/s, step {:.3f} s",
                       format_bytes(peak_reserved(one.result)), n, best->name,
                       best->result.tokens_per_s, best->result.step_time.seconds());
  }
  if (best->speedup < 1.05) {
    return fmt::format("a second GPU does not make this job faster: the best plan on {}, {}, "
                       "gives {:.2f}x the tokens/s of one GPU; it only spreads the memory",
                       n, best->name, best->speedup);
  }
  return fmt::format("{} GPUs make it faster: {} gives {:.2f}x the tokens/s of one GPU "
                     "({:.0f}% scaling efficiency), peak {} per GPU against {}",
                     n, best->name, best->speedup, 100.0 * best->scaling_efficiency,
                     format_bytes(peak_reserved(best->result)),
                     format_bytes(peak_reserved(one.result)));
}

}  // namespace

Bytes peak_allocated(const training::TrainingResult& r) {
  Bytes peak;
  for (const training::DeviceResult& d : r.devices) peak = max(peak, d.peak_allocated);
  return peak;
}

Bytes peak_reserved(const training::TrainingResult& r) {
  Bytes peak;
  for (const training::DeviceResult& d : r.devices) {
    peak = max(peak, d.peak_reserved + d.non_allocator);
  }
  return peak;
}

CompareTrainAnswer compare_train(const CompareTrain& q) {
  ValidationReport report;
  if (q.num_gpus < 2 || q.num_gpus > 4096) {
    report.error("compare.num_gpus", fmt::format("must be in [2, 4096], got {}", q.num_gpus));
  }
  if (q.price_per_gpu_hour &&
      !(*q.price_per_gpu_hour > 0.0 && std::isfinite(*q.price_per_gpu_hour))) {
    report.error("compare.price_per_gpu_hour", "must be > 0 and finite");
  }
  throw_if_errors(report);
  // The user's plan, resolved; then one GPU, no model parallelism, the user's global batch
  // (rounded up so that N data-parallel ranks can split it into whole micro-batches).
  training::TrainingSetup base = resolve_training(q.options);
  const int n = q.num_gpus;
  const std::int64_t given = base.plan.effective_global_batch();
  const std::int64_t unit = base.plan.micro_batch * n;
  const std::int64_t global_batch = (given + unit - 1) / unit * unit;
  base.plan.num_gpus = 1;
  base.plan.tp = 1;
  base.plan.pp = 1;
  base.plan.cp = 1;
  base.plan.ep = 1;
  base.plan.global_batch = global_batch;
  using training::Strategy;
  CompareTrainAnswer c;
  c.global_batch = global_batch;
  if (global_batch != given) {
    c.batch_note = fmt::format("the plan's global batch of {} sequences is not a multiple of "
                               "micro-batch x {} GPUs = {}: every option runs {} sequences per "
                               "step",
                               given, n, unit, global_batch);
  }
  c.price_per_gpu_hour = q.price_per_gpu_hour;
  c.options.push_back(run_option("1 GPU", base, 1, Strategy::kDdp, 1));
  c.options.push_back(run_option(fmt::format("DDP x{}", n), base, n, Strategy::kDdp, 1));
  c.options.push_back(run_option(fmt::format("ZeRO-1 x{}", n), base, n, Strategy::kZero1, 1));
  c.options.push_back(run_option(fmt::format("ZeRO-2 x{}", n), base, n, Strategy::kZero2, 1));
  c.options.push_back(run_option(fmt::format("FSDP full x{}", n), base, n, Strategy::kFsdpFull, 1));
  c.options.push_back(run_option(fmt::format("TP={}", n), base, n, Strategy::kDdp, n));
  // Context parallelism (ring): each GPU takes 1/N of every sequence, as TP accumulating the
  // step's micro-batches.
  c.options.push_back(run_option(fmt::format("CP={}", n), base, n, Strategy::kDdp, 1, n));
  // A mixture-of-experts model: N data-parallel ranks sharing their experts (DP=N with EP=N,
  // Megatron-LM's --expert-model-parallel-size).
  if (base.model.is_moe()) {
    c.options.push_back(
        run_option(fmt::format("DDP x{} + EP={}", n, n), base, n, Strategy::kDdp, 1, 1, n));
  }
  const TrainOption& one = c.options.front();
  const double base_tps = one.valid && one.result.fits ? one.result.tokens_per_s : 0.0;
  for (TrainOption& o : c.options) {
    if (!o.valid || !o.result.fits || base_tps <= 0.0) continue;
    o.speedup = o.result.tokens_per_s / base_tps;
    o.scaling_efficiency = o.speedup / o.num_gpus;
  }
  c.verdict = verdict(c);
  return c;
}

}  // namespace vramsim::run
