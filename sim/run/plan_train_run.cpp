#include "sim/run/plan_train_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "sim/run/plan_train_results.hpp"
#include "sim/run/sweep_output.hpp"
#include "sim/run/sweep_parallel.hpp"
#include "sim/run/train_run.hpp"

namespace vramsim::run {

std::string_view to_string(PlanStatus s) { return name_of(kPlanStatuses, s); }
std::optional<PlanStatus> plan_status_from_string(std::string_view s) {
  return parse_name(kPlanStatuses, s);
}

std::size_t PlanTrainSpace::size() const {
  return strategies.size() * tps.size() * pps.size() * micro_batches.size() *
         checkpointing.size() * offload_optimizer.size() * cps.size() * eps.size();
}

std::string PlanTrainRow::flags() const {
  return fmt::format("--strategy {} --tp {} --pp {} --micro-batch {} --checkpointing {}{}{}{}",
                     training::to_string(strategy), tp, pp, micro_batch,
                     training::to_string(checkpointing),
                     offload_optimizer ? " --offload-optimizer" : "",
                     cp > 1 ? fmt::format(" --cp {}", cp) : "",
                     ep > 1 ? fmt::format(" --ep {}", ep) : "");
}

namespace {

/// The base options with the searched settings at values every model and GPU count allows, so
/// that resolving them checks only what the search keeps (model, GPU, topology, LoRA, ...).
TrainOptions base_for_resolution(const TrainOptions& o) {
  TrainOptions b = o;
  b.strategy = training::Strategy::kDdp;
  b.tp = 1;
  b.pp = 1;
  b.cp = 1;
  b.ep = 1;
  b.pp_schedule = training::PipelineSchedule::k1F1B;
  b.pp_interleave = 1;
  b.sequence_parallel = false;
  b.micro_batch = 1;
  b.global_batch = 0;
  b.checkpointing = {};
  b.offload_optimizer = false;
  return b;
}

template <class T>
void check_unique_positive(const std::vector<T>& values, std::string_view field,
                           ValidationReport& report) {
  std::set<T> seen;
  for (const T& v : values) {
    if (v < 1 || v > 4096) {
      report.error(std::string(field), fmt::format("must be in [1, 4096], got {}", v));
    } else if (!seen.insert(v).second) {
      report.error(std::string(field), fmt::format("{} is listed twice", v));
    }
  }
}

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t at_most) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= std::min(n, at_most); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

/// Row `index` of the product with its skip decision (not simulated yet).
PlanTrainRow make_row(const PlanTrainSpace& sp, std::size_t index, const TrainOptions& o,
                      const training::TrainingSetup& base, std::int64_t global_batch,
                      training::TrainingPlan& plan) {
  PlanTrainRow r;
  r.index = static_cast<std::int64_t>(index);
  std::size_t k = index;
  const auto take = [&k](std::size_t n) {
    const std::size_t v = k % n;
    k /= n;
    return v;
  };
  // Offload fastest, strategy slowest.
  r.offload_optimizer = sp.offload_optimizer[take(sp.offload_optimizer.size())];
  r.checkpointing = sp.checkpointing[take(sp.checkpointing.size())];
  r.micro_batch = sp.micro_batches[take(sp.micro_batches.size())];
  r.pp = sp.pps[take(sp.pps.size())];
  r.tp = sp.tps[take(sp.tps.size())];
  r.strategy = sp.strategies[take(sp.strategies.size())];
  r.cp = sp.cps[take(sp.cps.size())];
  r.ep = sp.eps[take(sp.eps.size())];
  const std::int64_t n = base.plan.num_gpus;
  if (n % (r.tp * r.cp * r.pp) != 0) {
    r.status = PlanStatus::kInvalid;
    r.reason = r.cp > 1 ? fmt::format("hardware.num_gpus: tp x cp x pp = {} does not divide the "
                                      "{} GPUs",
                                      r.tp * r.cp * r.pp, n)
                        : fmt::format("hardware.num_gpus: tp x pp = {} does not divide the {} GPUs",
                                      r.tp * r.pp, n);
    return r;
  }
  r.dp = n / (r.tp * r.cp * r.pp);
  if (r.dp * r.cp == 1 && r.strategy != training::Strategy::kDdp) {
    r.status = PlanStatus::kSameAsDdp;
    r.reason = r.cp > 1 ? "cp x dp = 1: nothing to shard, the same plan as ddp"
                        : "dp = 1: nothing to shard, the same plan as ddp";
    return r;
  }
  if (global_batch % (r.dp * r.micro_batch) != 0) {
    r.status = PlanStatus::kBatch;
    r.reason = fmt::format("batch.global_batch: {} is not a multiple of dp x micro-batch = {}",
                           global_batch, r.dp * r.micro_batch);
    return r;
  }
  r.num_micro_batches = global_batch / (r.dp * r.micro_batch);
  plan = base.plan;
  plan.strategy = r.strategy;
  plan.tp = static_cast<int>(r.tp);
  plan.pp = static_cast<int>(r.pp);
  plan.cp = static_cast<int>(r.cp);
  plan.cp_comm = o.cp_comm;
  plan.ep = static_cast<int>(r.ep);
  plan.schedule = o.pp_schedule;
  plan.pp_interleave = static_cast<int>(o.pp_interleave);
  plan.sequence_parallel = o.sequence_parallel && r.tp > 1;
  plan.micro_batch = r.micro_batch;
  plan.global_batch = global_batch;
  plan.checkpointing = r.checkpointing;
  plan.offload_optimizer = r.offload_optimizer;
  ValidationReport report;
  plan.validate(report);
  if (report.ok()) plan.validate_for_model(base.model, report);
  if (!report.ok()) {
    const Problem& p = report.problems().front();
    r.status = PlanStatus::kInvalid;
    r.reason = p.field + ": " + p.message;
    return r;
  }
  r.status = PlanStatus::kDoesNotFit;  // until simulated
  return r;
}

void fill_from_result(PlanTrainRow& r, const training::TrainingResult& res) {
  r.status = res.fits ? PlanStatus::kFits : PlanStatus::kDoesNotFit;
  r.step_time = res.step_time;
  r.tokens_per_s = res.tokens_per_s;
  r.mfu = res.mfu;
  if (const training::DeviceResult* d = binding_device(res)) {
    r.binding_stage = d->stage;
    r.peak = d->peak_reserved + d->non_allocator;
    r.peak_allocated = d->peak_allocated;
    r.capacity = d->capacity;
    r.headroom = d->capacity - r.peak;
  }
}

PlanTrainRow simulate_row(PlanTrainRow r, const training::TrainingSetup& base,
                          const training::TrainingPlan& plan) {
  training::TrainingSetup s = base;
  s.plan = plan;
  try {
    fill_from_result(r, training::simulate_training(s, {.num_steps = 1, .record_timeline = false}));
  } catch (const ConfigError& e) {  // a cost the calibration cannot give this plan
    const Problem& p = e.report().problems().front();
    r.status = PlanStatus::kInvalid;
    r.reason = p.field + ": " + p.message;
  }
  return r;
}

bool faster(const PlanTrainRow& a, const PlanTrainRow& b) {
  if (a.step_time != b.step_time) return a.step_time < b.step_time;
  if (a.headroom != b.headroom) return a.headroom > b.headroom;
  return a.index < b.index;
}

// Two fitting plans are equivalent when only their strategies differ and they simulate to the
// same step time and memory, bit for bit.
bool equivalent_plans(const PlanTrainRow& x, const PlanTrainRow& y) {
  return x.tp == y.tp && x.pp == y.pp && x.dp == y.dp && x.cp == y.cp && x.ep == y.ep &&
         x.micro_batch == y.micro_batch &&
         x.num_micro_batches == y.num_micro_batches && x.checkpointing == y.checkpointing &&
         x.offload_optimizer == y.offload_optimizer && x.step_time == y.step_time &&
         x.peak == y.peak && x.peak_allocated == y.peak_allocated;
}

// `fit` sorted fastest first, with each group of equivalent plans folded into its lowest
// index (recorded in a.equivalent). Equivalent plans tie in step time and headroom, so the
// sort puts each group together in index order.
std::vector<std::size_t> fold_equivalent(PlanTrainAnswer& a, const std::vector<std::size_t>& fit) {
  std::vector<std::size_t> kept;
  kept.reserve(fit.size());
  std::size_t group_start = 0;  // the first kept plan with the current step time
  for (const std::size_t i : fit) {
    if (!kept.empty() && a.rows[kept.back()].step_time != a.rows[i].step_time) {
      group_start = kept.size();
    }
    bool folded = false;
    for (std::size_t k = group_start; k < kept.size(); ++k) {
      if (equivalent_plans(a.rows[kept[k]], a.rows[i])) {
        a.equivalent[kept[k]].push_back(i);
        folded = true;
        break;
      }
    }
    if (!folded) kept.push_back(i);
  }
  return kept;
}

void summarise(PlanTrainAnswer& a, std::int64_t top) {
  std::vector<std::size_t> fit;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const PlanTrainRow& r = a.rows[i];
    PlanTrainCounts& c = a.counts;
    switch (r.status) {
      case PlanStatus::kFits: ++c.num_fit; fit.push_back(i); break;
      case PlanStatus::kDoesNotFit: ++c.num_not_fit; break;
      case PlanStatus::kBatch: ++c.num_skipped_batch; break;
      case PlanStatus::kInvalid: ++c.num_skipped_invalid; break;
      case PlanStatus::kSameAsDdp: ++c.num_skipped_same_as_ddp; break;
    }
    if (r.status == PlanStatus::kDoesNotFit &&
        (!a.closest || r.headroom > a.rows[*a.closest].headroom)) {
      a.closest = i;
    }
  }
  a.counts.num_plans = static_cast<std::int64_t>(a.rows.size());
  a.counts.num_simulated = a.counts.num_fit + a.counts.num_not_fit;
  std::stable_sort(fit.begin(), fit.end(),
                   [&](std::size_t x, std::size_t y) { return faster(a.rows[x], a.rows[y]); });
  fit = fold_equivalent(a, fit);
  a.fastest.assign(fit.begin(),
                   fit.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(fit.size()),
                                                          static_cast<std::ptrdiff_t>(top)));
  // By step time (ties: more headroom first); a plan joins the front when its headroom beats
  // every faster plan's.
  bool any = false;
  Bytes best;
  for (const std::size_t i : fit) {
    if (any && a.rows[i].headroom <= best) continue;
    a.pareto.push_back(i);
    best = a.rows[i].headroom;
    any = true;
  }
  if (a.counts.num_fit > 0) a.closest.reset();
}

struct Prepared {
  training::TrainingSetup base;
  PlanTrainSpace space;
  std::vector<PlanTrainRow> rows;
  std::vector<training::TrainingPlan> plans;  // by index; set for the plans to simulate
  std::vector<std::size_t> to_run;
  std::string fingerprint;
};

Prepared prepare(const PlanTrainRequest& q) {
  ValidationReport report;
  if (q.options.global_batch <= 0) {
    report.error("batch.global_batch",
                 "plan train compares every plan at one global batch (sequences per step): "
                 "give it");
  }
  if (q.top < 1 || q.top > 1000) {
    report.error("plan.top", fmt::format("must be in [1, 1000], got {}", q.top));
  }
  if (q.jobs < 0) report.error("plan.jobs", fmt::format("must be >= 0, got {}", q.jobs));
  if (q.resume && q.out.empty()) {
    report.error("plan.resume", "needs --out: the results file of the run to resume");
  }
  if (!q.out.empty()) {
    const std::filesystem::path dir = q.out.parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir)) {
      report.error("plan.out", fmt::format("no such directory: {}", dir.string()));
    }
  }
  throw_if_errors(located(q.options, report));
  Prepared p;
  p.base = resolve_training(base_for_resolution(q.options));
  p.space = plan_train_space(q, p.base);
  const std::size_t n = p.space.size();
  p.rows.resize(n);
  p.plans.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    p.rows[i] = make_row(p.space, i, q.options, p.base, q.options.global_batch, p.plans[i]);
    if (p.rows[i].status == PlanStatus::kDoesNotFit) p.to_run.push_back(i);
  }
  if (p.to_run.empty()) {
    const bool batch = std::any_of(p.rows.begin(), p.rows.end(), [](const PlanTrainRow& r) {
      return r.status == PlanStatus::kBatch;
    });
    std::string dps;
    std::set<std::int64_t> seen;
    for (const PlanTrainRow& r : p.rows) {
      if (r.status == PlanStatus::kBatch && seen.insert(r.dp).second) {
        dps += fmt::format("{}{}", dps.empty() ? "" : ", ", r.dp);
      }
    }
    if (batch) {
      throw ConfigError(located(
          q.options,
          [&] {
            ValidationReport r;
            r.error("batch.global_batch",
                    fmt::format("{} sequences per step is not a multiple of dp x micro-batch for "
                                "any plan of the search (dp {}; micro-batches {}): no plan can "
                                "run at this global batch",
                                q.options.global_batch, dps,
                                fmt::join(p.space.micro_batches, ", ")));
            return r;
          }()));
    }
    const PlanTrainRow* first = nullptr;
    for (const PlanTrainRow& r : p.rows) {
      if (r.status == PlanStatus::kInvalid) {
        first = &r;
        break;
      }
    }
    throw ConfigError("plan", fmt::format("no plan of the search is valid for {} on {} GPUs{}",
                                          p.base.model.name, p.base.plan.num_gpus,
                                          first ? fmt::format(" (first: {}: {})", first->flags(),
                                                              first->reason)
                                                : std::string()));
  }
  p.fingerprint = plan_search_fingerprint(q.options);
  return p;
}

}  // namespace

PlanTrainSpace plan_train_space(const PlanTrainRequest& q, const training::TrainingSetup& base) {
  ValidationReport report;
  PlanTrainSpace sp;
  const std::int64_t n = base.plan.num_gpus;
  if (q.strategies.empty()) {
    using training::Strategy;
    sp.strategies = {Strategy::kDdp,      Strategy::kZero1,      Strategy::kZero2, Strategy::kZero3,
                     Strategy::kFsdpFull, Strategy::kFsdpGradOp, Strategy::kHsdp};
    // A framework set searches its own data parallelism only.
    if (const auto f = base.plan.framework) {
      std::erase_if(sp.strategies,
                    [&](Strategy s) { return !training::framework_runs(*f, s); });
    }
  }
  for (const std::string& s : q.strategies) {
    const std::optional<training::Strategy> v = training::strategy_from_string(s);
    if (!v) {
      report.error("plan.strategies", fmt::format("unknown strategy '{}'; valid: {}", s,
                                                  training::strategy_names()));
    } else if (std::find(sp.strategies.begin(), sp.strategies.end(), *v) != sp.strategies.end()) {
      report.error("plan.strategies", fmt::format("{} is listed twice", s));
    } else {
      sp.strategies.push_back(*v);
    }
  }
  sp.tps = q.tps.empty() ? divisors(n, base.plan.gpus_per_node) : q.tps;
  sp.pps = q.pps.empty() ? divisors(n, n) : q.pps;
  if (q.micro_batches.empty()) {
    for (std::int64_t mb = 1; mb <= std::min<std::int64_t>(64, q.options.global_batch); mb *= 2) {
      sp.micro_batches.push_back(mb);
    }
  } else {
    sp.micro_batches = q.micro_batches;
  }
  sp.cps = q.cps.empty() ? std::vector<std::int64_t>{1} : q.cps;
  sp.eps = q.eps.empty() ? std::vector<std::int64_t>{1} : q.eps;
  check_unique_positive(q.cps, "plan.cps", report);
  check_unique_positive(q.eps, "plan.eps", report);
  check_unique_positive(q.tps, "plan.tps", report);
  check_unique_positive(q.pps, "plan.pps", report);
  check_unique_positive(q.micro_batches, "plan.micro_batches", report);
  const std::vector<std::string> policies =
      q.checkpointing.empty()
          ? std::vector<std::string>(std::begin(kSearchPolicies), std::end(kSearchPolicies))
          : q.checkpointing;
  for (const std::string& c : policies) {
    const std::optional<training::Checkpointing> v = training::checkpointing_from_string(c);
    if (!v) {
      report.error("plan.checkpointing", fmt::format("unknown policy '{}'; valid: {}", c,
                                                     training::checkpointing_names()));
    } else if (std::find(sp.checkpointing.begin(), sp.checkpointing.end(), *v) !=
               sp.checkpointing.end()) {
      report.error("plan.checkpointing", fmt::format("{} is listed twice", c));
    } else {
      sp.checkpointing.push_back(*v);
    }
  }
  const std::vector<std::string> offload =
      q.offload.empty() ? std::vector<std::string>{"no", "yes"} : q.offload;
  for (const std::string& x : offload) {
    if (x != "no" && x != "yes") {
      report.error("plan.offload", fmt::format("must be no or yes, got '{}'", x));
    } else if (std::find(sp.offload_optimizer.begin(), sp.offload_optimizer.end(), x == "yes") !=
               sp.offload_optimizer.end()) {
      report.error("plan.offload", fmt::format("{} is listed twice", x));
    } else {
      sp.offload_optimizer.push_back(x == "yes");
    }
  }
  throw_if_errors(report);
  if (sp.size() > 1'000'000) {
    throw ConfigError("plan", fmt::format("the search has {} plans; at most 1000000", sp.size()));
  }
  return sp;
}

PlanTrainAnswer plan_train(const PlanTrainRequest& q, const PlanTrainCallbacks& cb) {
  const SweepWorld world;
  Prepared p;
  try {
    p = prepare(q);
  } catch (const ConfigError&) {
    if (world.is_root()) throw;
    PlanTrainAnswer other;  // every rank finds the same problems; rank 0 reports them
    other.root = false;
    return other;
  }
  // Rank 0 finds what an interrupted run finished and tells the others.
  std::vector<std::size_t> resumed;
  if (world.is_root() && q.resume) {
    for (const PointRecord& rec : previous_records(q.out, cb.warning)) {
      if (rec.index < 0 || static_cast<std::size_t>(rec.index) >= p.rows.size()) continue;
      PlanTrainRow& row = p.rows[static_cast<std::size_t>(rec.index)];
      if (row.status != PlanStatus::kDoesNotFit) continue;
      if (!plan_row_from_record(rec, p.fingerprint, row)) continue;
      resumed.push_back(static_cast<std::size_t>(rec.index));
    }
  }
  SpreadWork w;
  w.candidates = p.to_run;
  w.done = world.broadcast_indices(resumed);
  w.threads = search_threads(q.jobs, world);
  // Opened first: a results file that cannot be written fails before any simulation.
  std::optional<io::ResultsWriter> writer;
  std::unique_ptr<Journal> journal;
  try {
    if (world.is_root() && !q.out.empty()) {
      writer.emplace(q.out);
      journal = std::make_unique<Journal>(journal_path(q.out), q.resume);
    }
  } catch (const ConfigError&) {
    world.broadcast("");
    throw;
  }
  const Prepared& cp = p;
  w.work = [&cp](std::size_t i) {
    return plan_row_record(simulate_row(cp.rows[i], cp.base, cp.plans[i]), cp.fingerprint);
  };
  if (!world.is_root()) {
    spread_points(world, w);
    world.broadcast("");
    PlanTrainAnswer other;
    other.root = false;
    return other;
  }
  w.take = [&](const PointRecord& rec) {
    if (journal) journal->append(rec);
    PlanTrainRow& row = p.rows.at(static_cast<std::size_t>(rec.index));
    VRAMSIM_CHECK(plan_row_from_record(rec, p.fingerprint, row), "a malformed plan record");
  };
  w.progress = cb.progress;
  spread_points(world, w);
  world.broadcast("");
  PlanTrainAnswer a;
  a.base = std::move(p.base);
  a.space = std::move(p.space);
  a.global_batch = q.options.global_batch;
  a.rows = std::move(p.rows);
  a.counts.num_resumed = static_cast<std::int64_t>(resumed.size());
  summarise(a, q.top);
  if (writer) {
    write_plan_train_results(*writer, a, q);
    journal->remove();
  }
  return a;
}

}  // namespace vramsim::run
