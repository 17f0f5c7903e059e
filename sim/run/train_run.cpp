#include "sim/run/train_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/profile_for_device.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/run/data_root.hpp"
#include "sim/serving/traces/length_distribution.hpp"
#include "sim/training/cluster_links.hpp"

namespace vramsim::run {

namespace {

int to_int(std::int64_t v) { return static_cast<int>(std::clamp<std::int64_t>(v, -1, 1 << 30)); }

/// `load()`, its problems about schema paths placed at their origin.
template <class F>
auto at_origin(const TrainOptions& o, F load) {
  try {
    return load();
  } catch (const ConfigError& e) {
    throw ConfigError(located(o, e.report()));
  }
}

model::ModelSpec load_model_at(const TrainOptions& o, const std::filesystem::path& zoo) {
  try {
    model::ResolveOptions resolve;
    resolve.revision = o.revision;
    return model::load_model(o.model, zoo, resolve);
  } catch (const ConfigError& e) {
    ValidationReport report;
    for (const Problem& p : e.report().problems()) {
      report.error(p.field == "model" ? "model.id" : p.field, p.message, p.where);
    }
    throw ConfigError(located(o, report));
  }
}

// The samples of --sample-lengths: each row's prompt + output tokens (a trace file or a length
// CSV, read by serving's trace readers), its problems placed on batch.sample_lengths.
std::shared_ptr<const training::SampleLengths> read_sample_lengths(const TrainOptions& o) {
  ValidationReport report;
  try {
    const std::vector<std::int32_t> prompts =
        serving::read_trace_lengths(o.sample_lengths, serving::LengthRole::kPrompt);
    const std::vector<std::int32_t> outputs =
        serving::read_trace_lengths(o.sample_lengths, serving::LengthRole::kOutput);
    VRAMSIM_CHECK(prompts.size() == outputs.size(), "{} prompt and {} output lengths in {}",
                  prompts.size(), outputs.size(), o.sample_lengths);
    std::vector<std::int64_t> samples(prompts.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      samples[i] = std::int64_t{prompts[i]} + std::int64_t{outputs[i]};
      if (samples[i] < 1) {
        report.error("batch.sample_lengths",
                     fmt::format("data row {} has no tokens (prompt and output both 0): a "
                                 "sample needs at least one",
                                 i + 1),
                     {o.sample_lengths, 0});
        throw ConfigError(located(o, report));
      }
    }
    if (samples.empty()) {
      report.error("batch.sample_lengths", "no samples in the file", {o.sample_lengths, 0});
      throw ConfigError(located(o, report));
    }
    return std::make_shared<const training::SampleLengths>(samples);
  } catch (const ConfigError& e) {
    if (!report.ok()) throw;
    for (const Problem& p : e.report().problems()) {
      report.error("batch.sample_lengths", p.message, p.where);
    }
    throw ConfigError(located(o, report));
  }
}

}  // namespace

training::TrainingSetup resolve_training(const TrainOptions& o) {
  ValidationReport report;
  training::TrainingPlan p;
  p.num_gpus = to_int(o.num_gpus);
  p.tp = to_int(o.tp);
  p.pp = to_int(o.pp);
  p.cp = to_int(o.cp);
  p.cp_comm = o.cp_comm;
  p.ep = to_int(o.ep);
  p.expert_load_imbalance = o.expert_load_imbalance;
  VRAMSIM_CHECK(!parse_expert_loads(o.expert_loads, p.expert_loads),
                "expert loads not validated: '{}'", o.expert_loads);
  p.moe_capacity_factor = o.moe_capacity_factor;
  p.moe_pad_to_capacity = o.moe_pad_to_capacity;
  p.offload_params = o.offload_params;
  p.nvme_gb_per_s = o.nvme_bandwidth;
  p.pp_interleave = to_int(o.pp_interleave);
  p.micro_batch = o.micro_batch;
  p.global_batch = o.global_batch;
  p.seq_len = o.seq_len;
  p.sequence_parallel = o.sequence_parallel;
  p.offload_optimizer = o.offload_optimizer;
  p.offload_optimizer_device = o.offload_optimizer_device;
  p.fsdp_wrap_embeddings = o.fsdp_wrap_embeddings;
  p.sub_group_size = o.sub_group_size;
  p.cpu_adam_params_per_second = o.cpu_adam_rate;
  p.ddp_bucket = o.ddp_bucket_cap;
  p.reduce_bucket_size = o.reduce_bucket_size;
  p.contiguous_gradients = o.contiguous_gradients;
  p.overlap_comm = o.overlap_comm;
  p.max_reuse_distance = o.max_reuse_distance;
  p.param_persistence_threshold = o.param_persistence_threshold;
  p.model_persistence_threshold = o.model_persistence_threshold;
  p.prefetch_bucket_size = o.prefetch_bucket_size;
  p.max_live_parameters = o.max_live_parameters;
  p.strategy = o.strategy;
  p.schedule = o.pp_schedule;
  p.checkpointing = o.checkpointing;
  p.precision = o.precision;
  p.optimizer = o.optimizer;
  p.optimizer_impl = o.optimizer_impl;
  p.attention = o.attention;
  p.kernels = o.kernels;
  p.framework = o.framework;
  p.loss = o.loss;
  p.lora.rank = o.lora_rank;
  p.lora.alpha = o.lora_alpha;
  p.lora.dropout = o.lora_dropout;
  // Both lists were checked by their rows.
  VRAMSIM_CHECK(!parse_lora_targets(o.lora_targets, p.lora) &&
                    !parse_lora_extra(o.lora_trainable_extra, p.lora),
                "LoRA lists not validated: '{}' / '{}'", o.lora_targets, o.lora_trainable_extra);
  p.base_quant = o.base_quant;
  p.double_quant = o.double_quant;
  p.paged_optimizer = o.paged_optimizer;
  p.packing = o.packing;
  if (!o.sample_lengths.empty()) p.samples = read_sample_lengths(o);

  const std::filesystem::path root = project_root();
  training::TrainingSetup s{
      load_model_at(o, root / "scenarios" / "models"),
      at_origin(o, [&] { return io::find_device(o.gpu, root / "topologies", "hardware.gpu"); }),
      p,
      {}};
  s.links = training::default_cluster_links(s.device);
  // Hugging Face Trainer's "auto" reduce_bucket_size (integrations/deepspeed.py).
  if (o.reduce_bucket_size_auto) {
    s.plan.reduce_bucket_size = s.model.hidden_size * s.model.hidden_size;
  }
  // And its ZeRO-3 ones (HfTrainerDeepSpeedConfig.trainer_config_finalize): the prefetch bucket
  // int(0.9 hidden_size^2), the persistence threshold 10 hidden_size. DeepSpeed reads neither
  // below stage 3, where "auto" is left unfilled.
  if (s.plan.strategy == training::Strategy::kZero3 && s.plan.deepspeed_zero()) {
    const std::int64_t h = s.model.hidden_size;
    if (o.prefetch_bucket_size_auto) {
      s.plan.prefetch_bucket_size = static_cast<std::int64_t>(0.9 * static_cast<double>(h * h));
    }
    if (o.param_persistence_threshold_auto) s.plan.param_persistence_threshold = 10 * h;
  }
  if (!o.calibration.empty()) {
    s.calibration = at_origin(o, [&] {
      return cost::load_profile_for_device(o.calibration, s.device, "hardware.calibration");
    });
  }
  std::optional<int> node_gpus;
  std::string t_node_id;
  if (!o.topology.empty()) {
    const io::ClusterTopology t = at_origin(o, [&] {
      return io::load_cluster_topology(o.topology, root / "topologies", "hardware.topology");
    });
    if (t.node) {
      ValidationReport nr;
      hardware::validate_node_for_device(*t.node, s.device, nr, "hardware.topology");
      throw_if_errors(located(o, nr));
      if (auto bw = hardware::fabric_bandwidth(*t.node, s.device)) {
        s.links.intra = {*bw, t.node->fabric.latency};
      }
      node_gpus = t.node->num_gpus;
      t_node_id = t.node->id;
    }
    if (t.network_bandwidth) s.links.inter.bandwidth = *t.network_bandwidth;
    if (t.network_latency) s.links.inter.latency = *t.network_latency;
  }
  // Without a node, a job of up to 8 GPUs sits in one node, a larger one in nodes of 8.
  s.plan.gpus_per_node = o.origin("hardware.gpus_per_node").kind == OriginKind::kDefault
                             ? node_gpus.value_or(std::clamp(p.num_gpus, 1, 8))
                             : to_int(o.gpus_per_node);
  if (node_gpus && s.plan.gpus_per_node > *node_gpus) {
    report.error("hardware.gpus_per_node",
                 fmt::format("{} GPUs per node exceed the topology's node '{}' of {} GPUs",
                             s.plan.gpus_per_node, t_node_id, *node_gpus));
  }
  s.plan.validate(report);
  if (report.ok()) s.plan.validate_for_model(s.model, report);
  throw_if_errors(located(o, report));
  return s;
}

std::string_view to_string(TrainSearch s) {
  switch (s) {
    case TrainSearch::kMicroBatch: return "micro_batch";
    case TrainSearch::kSeqLen: return "seq_len";
  }
  VRAMSIM_UNREACHABLE("TrainSearch");
}

const training::DeviceResult* binding_device(const training::TrainingResult& r) {
  if (r.devices.empty()) return nullptr;
  return &*std::max_element(r.devices.begin(), r.devices.end(),
                            [](const training::DeviceResult& a, const training::DeviceResult& b) {
                              return a.peak_reserved + a.non_allocator <
                                     b.peak_reserved + b.non_allocator;
                            });
}

TrainProbe make_train_probe(std::string checkpointing, TrainSearch search,
                            const training::TrainingPlan& plan, const training::TrainingResult& r) {
  TrainProbe p;
  p.checkpointing = std::move(checkpointing);
  p.search = search;
  p.micro_batch = plan.micro_batch;
  p.seq_len = plan.seq_len;
  p.fits = r.fits;
  p.step_time = r.step_time;
  p.tokens_per_s = r.tokens_per_s;
  if (const training::DeviceResult* d = binding_device(r)) {
    p.binding_stage = d->stage;
    p.peak_allocated = d->peak_allocated;
    p.peak_reserved = d->peak_reserved;
    p.non_allocator = d->non_allocator;
    p.capacity = d->capacity;
  }
  return p;
}

MaxMicroBatch find_max_micro_batch(training::TrainingSetup s, const training::Checkpointing& ckpt,
                                   std::vector<TrainProbe>* probes) {
  const std::int64_t m = s.plan.num_micro_batches();
  s.plan.checkpointing = ckpt;
  MaxMicroBatch row{training::to_string(ckpt), 0, {}};
  auto run = [&](std::int64_t mb) {
    s.plan.micro_batch = mb;
    s.plan.global_batch = mb * s.plan.dp() * m;
    training::TrainingResult r =
        training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
    if (probes) {
      probes->push_back(make_train_probe(row.checkpointing, TrainSearch::kMicroBatch, s.plan, r));
    }
    return r;
  };
  std::int64_t lo = 0, hi = 1;
  while (hi <= 4096) {
    training::TrainingResult r = run(hi);
    if (!r.fits) break;
    lo = hi;
    row.result = std::move(r);
    hi *= 2;
  }
  while (hi - lo > 1) {  // lo fits (or is 0), hi does not
    const std::int64_t mid = (lo + hi) / 2;
    training::TrainingResult r = run(mid);
    if (r.fits) {
      lo = mid;
      row.result = std::move(r);
    } else {
      hi = mid;
    }
  }
  row.micro_batch = lo;
  return row;
}

std::int64_t seq_len_step(const training::TrainingPlan& plan) {
  if (plan.cp <= 1) return kSeqLenStep;
  const std::int64_t split = plan.cp_comm == training::CpComm::kRing ? 2 * plan.cp : plan.cp;
  return std::lcm(kSeqLenStep, split);
}

namespace {

// The longest sequence (a multiple of seq_len_step, at most 1M tokens) that fits at micro-batch
// 1. Every simulated step is appended to `probes`.
std::int64_t max_seq_len(training::TrainingSetup s, std::vector<TrainProbe>& probes) {
  const std::int64_t step = seq_len_step(s.plan);
  const std::int64_t m = s.plan.num_micro_batches();
  s.plan.micro_batch = 1;
  s.plan.global_batch = s.plan.dp() * m;
  const auto fits = [&](std::int64_t steps) {
    s.plan.seq_len = steps * step;
    const training::TrainingResult r =
        training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
    probes.push_back(make_train_probe(training::to_string(s.plan.checkpointing),
                                      TrainSearch::kSeqLen, s.plan, r));
    return r.fits;
  };
  std::int64_t lo = 0;
  std::int64_t hi = 1;
  while (hi * step <= (std::int64_t{1} << 20) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi * step > (std::int64_t{1} << 20)) return lo * step;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid; else hi = mid;
  }
  return lo * step;
}

}  // namespace

std::vector<TrainCapacityRow> capacity_train(const training::TrainingSetup& setup,
                                             std::vector<TrainProbe>* probes) {
  std::vector<TrainCapacityRow> rows;
  for (std::string_view policy : kSearchPolicies) {
    training::TrainingSetup s = setup;
    s.plan.checkpointing = *training::checkpointing_from_string(policy);
    TrainCapacityRow row;
    row.checkpointing = std::string(policy);
    std::vector<TrainProbe> mine;
    const MaxMicroBatch mb = find_max_micro_batch(s, s.plan.checkpointing, &mine);
    row.max_micro_batch = mb.micro_batch;
    row.tokens_per_s_at_max_micro_batch = mb.micro_batch > 0 ? mb.result.tokens_per_s : 0.0;
    row.max_seq_len = max_seq_len(s, mine);
    row.num_runs = static_cast<std::int64_t>(mine.size());
    if (probes) probes->insert(probes->end(), mine.begin(), mine.end());
    rows.push_back(row);
  }
  return rows;
}

namespace {

/// How much of the model state a strategy shards over the data-parallel ranks (ZeRO's stages).
int sharding_level(training::Strategy s) {
  using training::Strategy;
  switch (s) {
    case Strategy::kDdp:
    case Strategy::kFsdpNoShard: return 0;
    case Strategy::kZero1: return 1;
    case Strategy::kZero2:
    case Strategy::kFsdpGradOp: return 2;
    case Strategy::kZero3:
    case Strategy::kFsdpFull:
    case Strategy::kHsdp: return 3;
  }
  return 0;
}

}  // namespace

std::vector<TrainFix> train_fixes(const training::TrainingSetup& setup,
                                  const training::TrainingResult& result) {
  using training::Strategy;
  std::vector<TrainFix> out;
  const training::TrainingPlan& p = setup.plan;
  const auto attempt = [&](std::string change, std::string why,
                           const std::function<void(training::TrainingPlan&)>& edit) {
    training::TrainingSetup s = setup;
    s.plan.global_batch = p.effective_global_batch();  // the same sequences per step
    edit(s.plan);
    ValidationReport report;
    s.plan.validate(report);
    s.plan.validate_for_model(s.model, report);
    if (!report.ok()) return;  // not a plan for this model and cluster
    const training::TrainingResult r =
        training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
    TrainFix f{std::move(change), std::move(why), r.fits, {}, {}, r.step_time, r.tokens_per_s};
    if (const training::DeviceResult* d = binding_device(r)) {
      f.peak = d->peak_reserved + d->non_allocator;
      f.capacity = d->capacity;
    }
    out.push_back(std::move(f));
  };
  if (result.fits) return out;

  for (const char* policy : {"selective", "full"}) {
    const training::Checkpointing c = *training::checkpointing_from_string(policy);
    if (c == p.checkpointing) continue;
    attempt(fmt::format("--checkpointing {}", policy),
            std::string(policy) == "full"
                ? "keep only each layer's input; recompute the whole forward in the backward"
                : "recompute attention's inner activations in the backward",
            [&](training::TrainingPlan& q) { q.checkpointing = c; });
  }
  for (std::int64_t mb = p.micro_batch / 2; mb >= 1; mb /= 2) {
    attempt(fmt::format("--micro-batch {}", mb),
            "fewer sequences in flight per micro-batch, more micro-batches per step",
            [&](training::TrainingPlan& q) { q.micro_batch = mb; });
    if (mb == 1) break;
  }
  // Context parallelism from the data-parallel ranks: a rank's tokens of every sequence halve.
  if (p.dp() % 2 == 0 && p.attention == training::Attention::kFlash) {
    attempt(fmt::format("--cp {}", 2 * p.cp),
            "split each sequence over twice the ranks (context parallelism): a rank's "
            "activations and logits halve, at the ring's K/V transfers",
            [&](training::TrainingPlan& q) { q.cp = 2 * p.cp; });
  }
  if (p.grad_group() > 1) {
    for (const Strategy st : {Strategy::kZero1, Strategy::kZero2, Strategy::kFsdpFull}) {
      if (sharding_level(st) <= sharding_level(p.strategy)) continue;  // no more sharded
      attempt(fmt::format("--strategy {}", training::to_string(st)),
              "shard more of the model state over the data-parallel ranks, at more "
              "communication",
              [&](training::TrainingPlan& q) { q.strategy = st; });
    }
  }
  if (!p.offload_optimizer) {
    attempt("--offload-optimizer", "optimizer state and step on the host, at host-link time",
            [&](training::TrainingPlan& q) { q.offload_optimizer = true; });
  }
  // None alone: the memory savers together, one more at a time, until the plan fits.
  const bool any_fits = std::any_of(out.begin(), out.end(), [](const TrainFix& f) { return f.fits; });
  if (!any_fits) {
    const training::Checkpointing full = *training::checkpointing_from_string("full");
    const Strategy most = p.grad_group() > 1 && sharding_level(p.strategy) < 3 ? Strategy::kFsdpFull
                                                                       : p.strategy;
    struct Step {
      std::string flags;
      std::function<void(training::TrainingPlan&)> edit;
    };
    const Step steps[] = {
        {p.checkpointing == full ? "" : "--checkpointing full",
         [&](training::TrainingPlan& q) { q.checkpointing = full; }},
        {most == p.strategy ? "" : fmt::format("--strategy {}", training::to_string(most)),
         [&](training::TrainingPlan& q) { q.strategy = most; }},
        {p.micro_batch == 1 ? "" : "--micro-batch 1",
         [&](training::TrainingPlan& q) { q.micro_batch = 1; }},
        {p.offload_optimizer ? "" : "--offload-optimizer",
         [&](training::TrainingPlan& q) { q.offload_optimizer = true; }},
    };
    std::string flags;
    std::vector<const Step*> applied;
    for (const Step& st : steps) {
      if (st.flags.empty()) continue;
      applied.push_back(&st);
      flags += (flags.empty() ? "" : " ") + st.flags;
      if (applied.size() < 2) continue;  // alone, it was tried above
      attempt(flags, "the memory savers together",
              [&](training::TrainingPlan& q) {
                for (const Step* a : applied) a->edit(q);
              });
      if (!out.empty() && out.back().change == flags && out.back().fits) break;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const TrainFix& a, const TrainFix& b) {
    if (a.fits != b.fits) return a.fits;
    return a.fits && a.tokens_per_s > b.tokens_per_s;
  });
  return out;
}

}  // namespace vramsim::run
