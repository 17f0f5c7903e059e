#include "sim/cli/compare_train.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vramsim::cli {
namespace {

Bytes peak_allocated(const training::TrainingResult& r) {
  Bytes peak;
  for (const training::DeviceResult& d : r.devices) peak = max(peak, d.peak_allocated);
  return peak;
}

Bytes peak_reserved(const training::TrainingResult& r) {
  Bytes peak;
  for (const training::DeviceResult& d : r.devices) peak = max(peak, d.peak_reserved + d.non_allocator);
  return peak;
}

TrainOption run_option(std::string name, const training::TrainingSetup& base, int num_gpus,
                       training::Strategy strategy, int tp) {
  TrainOption o;
  o.name = std::move(name);
  o.num_gpus = num_gpus;
  o.setup = base;
  training::TrainingPlan& p = o.setup.plan;
  const std::int64_t micro_batches = base.plan.num_micro_batches();
  p.num_gpus = num_gpus;
  p.gpus_per_node = std::min(base.plan.gpus_per_node, num_gpus);
  p.strategy = strategy;
  p.tp = tp;
  p.pp = 1;
  if (tp == 1) p.sequence_parallel = false;
  p.global_batch = p.micro_batch * micro_batches * p.dp();
  ValidationReport report;
  p.validate(report);
  if (report.ok()) p.validate_for_model(o.setup.model, report);
  if (!report.ok()) {
    const Problem first = named_by_flags(report).problems().front();  // as the flags say it
    o.reason = first.field + ": " + first.message;
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
                     format_bytes(peak_reserved(best->result)), format_bytes(peak_reserved(one.result)));
}

}  // namespace

CompareTrainAnswer compare_train(const CompareTrainFlags& f) {
  if (f.num_gpus < 2 || f.num_gpus > 4096) {
    throw ConfigError("--num-gpus", fmt::format("must be in [2, 4096], got {}", f.num_gpus));
  }
  // The user's plan, resolved: its micro-batch, sequence length, precision, optimizer and
  // checkpointing are kept; the parallel plan is what the options vary.
  training::TrainingSetup base = resolve_train(f.train).setup;
  base.plan.num_gpus = 1;
  base.plan.tp = 1;
  base.plan.pp = 1;
  base.plan.global_batch = base.plan.micro_batch * base.plan.num_micro_batches();
  const int n = f.num_gpus;
  using training::Strategy;
  CompareTrainAnswer c;
  c.price_per_gpu_hour = f.price_per_gpu_hour;
  c.options.push_back(run_option("1 GPU", base, 1, Strategy::kDdp, 1));
  c.options.push_back(run_option(fmt::format("DDP x{}", n), base, n, Strategy::kDdp, 1));
  c.options.push_back(run_option(fmt::format("ZeRO-1 x{}", n), base, n, Strategy::kZero1, 1));
  c.options.push_back(run_option(fmt::format("ZeRO-2 x{}", n), base, n, Strategy::kZero2, 1));
  c.options.push_back(run_option(fmt::format("FSDP full x{}", n), base, n, Strategy::kFsdpFull, 1));
  c.options.push_back(run_option(fmt::format("TP={}", n), base, n, Strategy::kDdp, n));
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

nlohmann::ordered_json compare_train_json(const CompareTrainAnswer& c) {
  nlohmann::ordered_json j;
  j["mode"] = "train";
  j["verdict"] = c.verdict;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const TrainOption& o : c.options) {
    nlohmann::ordered_json x;
    x["name"] = o.name;
    x["num_gpus"] = o.num_gpus;
    x["valid"] = o.valid;
    if (!o.valid) {
      x["fits"] = false;
      x["reason"] = o.reason;
      list.push_back(x);
      continue;
    }
    x["fits"] = o.result.fits;
    x["peak_allocated_bytes"] = peak_allocated(o.result).count();
    x["peak_reserved_bytes"] = peak_reserved(o.result).count();
    x["step_time_s"] = o.result.step_time.seconds();
    x["tokens_per_s"] = o.result.tokens_per_s;
    x["mfu"] = o.result.mfu;
    x["speedup"] = o.speedup;
    x["scaling_efficiency"] = o.scaling_efficiency;
    if (c.price_per_gpu_hour && o.result.tokens_per_s > 0.0) {
      x["cost_per_million_tokens_usd"] =
          *c.price_per_gpu_hour * o.num_gpus / 3600.0 / o.result.tokens_per_s * 1e6;
    }
    list.push_back(x);
  }
  j["options"] = list;
  return j;
}

std::string compare_train_table(const CompareTrainAnswer& c) {
  const training::TrainingSetup& s = c.options.front().setup;
  std::string out = fmt::format("{} on {}: micro-batch {} x {} tokens, {} micro-batches per "
                                "step per data-parallel rank\n\n",
                                s.model.name, s.device.name, s.plan.micro_batch, s.plan.seq_len,
                                s.plan.num_micro_batches());
  out += fmt::format("{:<16}{:>5}{:>6}{:>14}{:>14}{:>10}{:>12}{:>7}{:>8}\n", "option", "GPUs",
                     "fits", "peak alloc", "peak total", "step (s)", "tokens/s", "MFU", "speed");
  for (const TrainOption& o : c.options) {
    if (!o.valid) {
      out += fmt::format("{:<16}{:>5}  not possible: {}\n", o.name, o.num_gpus, o.reason);
      continue;
    }
    out += fmt::format("{:<16}{:>5}{:>6}{:>14}{:>14}{:>10.3f}{:>12.0f}{:>6.1f}%{:>8}\n", o.name,
                       o.num_gpus, o.result.fits ? "yes" : "NO",
                       format_bytes(peak_allocated(o.result)), format_bytes(peak_reserved(o.result)),
                       o.result.step_time.seconds(), o.result.tokens_per_s, 100.0 * o.result.mfu,
                       o.speedup > 0.0 ? fmt::format("{:.2f}x", o.speedup) : "-");
  }
  out += fmt::format("\nVerdict: {}.\n", c.verdict);
  return out;
}

}  // namespace vramsim::cli
