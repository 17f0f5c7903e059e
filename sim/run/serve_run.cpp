#include "sim/run/serve_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>
#include <memory>
#include <optional>

#include "sim/comm/collective.hpp"
#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/validated_bands.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/host_stream_rate.hpp"
#include "sim/run/vllm_version.hpp"
#include "sim/serving/calibrated_time_model.hpp"
#include "sim/serving/lora_time_model.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/speculative.hpp"
#include "sim/training/cluster_links.hpp"

namespace vramsim::run {
namespace {

// Fills the replica's KV cache and limits from what the budget resolved.
void configure_replica(ServeConfig& c, const BudgetAnswer& b) {
  serving::ReplicaConfig& r = c.setup.replica;
  const memory::EngineConfig& e = b.engine;
  r.limits.max_num_seqs = e.max_num_seqs;
  // Without chunked prefill the budget has already raised it to max_model_len (one step must
  // hold a whole prompt, as in vLLM).
  r.limits.max_num_batched_tokens = e.max_num_batched_tokens;
  // A V0 release's default may differ from the request's (vllm_v0_defaults); V1 keeps it.
  r.limits.enable_chunked_prefill = b.enable_chunked_prefill;
  Bytes per_token;
  for (const memory::DeviceBudget& d : b.result.devices) per_token = max(per_token, d.kv_bytes_per_token);
  r.kv.num_blocks = b.result.num_gpu_blocks;
  // V0's block manager keeps 1% of the blocks free at admission; V1 has no watermark.
  r.limits.watermark_blocks =
      c.setup.scheduler == "vllm-v0" ? serving::vllm_v0_watermark_blocks(r.kv.num_blocks) : 0;
  r.kv.block_size = e.block_size;
  r.kv.enable_prefix_caching = c.enable_prefix_caching;
  r.kv.bytes_per_block = per_token * e.block_size;
  r.kv.num_host_blocks =
      r.kv.bytes_per_block > Bytes(0) ? c.swap_space / r.kv.bytes_per_block : 0;
  r.kv.num_offload_blocks = b.kv_offload.num_blocks;  // 0 without --kv-offloading-size
  r.kv.num_disk_blocks = b.kv_offload.disk_num_blocks;  // 0 without the disk tier
  r.kv.offload_backend = b.kv_offload.backend;
  r.kv.offload_chunk_blocks = b.kv_offload.chunk_blocks;  // LMCache's chunk; 1 for native
  r.disk_bytes_per_block = b.kv_offload.bytes_per_block;   // all devices share the disk
  r.pipeline_depth = e.pp;
  // Releases before 0.16.0 turn async scheduling off by default with pipeline parallelism (a
  // PP option compare or plan derives from a PP 1 setting); asked for explicitly, serve_config
  // refused it (resolve_async_scheduling).
  const std::optional<VllmVersion> version = parse_vllm_version(b.vllm_version);
  if (e.pp > 1 && !(version && vllm_behaviour(*version).async_scheduling_with_pp)) {
    r.async_scheduling = false;
  }
  // Data parallelism (expert_parallel.hpp): an MoE model's DP ranks step together.
  c.setup.data_parallel_size = e.data_parallel_size;
  c.setup.dp_lockstep = b.expert_parallel.lockstep(b.model.moe.has_value());
  c.setup.dp_pad_to_largest = !e.enforce_eager;
  // Every host copy (KV offload, swap, LoRA, streamed weights) is from or into pinned host
  // memory, at the achievable pinned rate of its direction (host_stream_rate.hpp).
  r.host_to_device = host_copy_rate(b, HostCopyDirection::kHostToDevice).rate;
  r.device_to_host = host_copy_rate(b, HostCopyDirection::kDeviceToHost).rate;
  c.setup.max_model_len = e.max_model_len;
  // Offloaded weights: every device streams its own share over its own host link.
  r.streamed_weights = Bytes(0);
  for (const memory::DeviceBudget& d : b.result.devices) {
    r.streamed_weights = max(r.streamed_weights, d.weights_offloaded);
  }
  if (e.lora) {
    // One adapter's share of the slots on the device holding the most (every device copies
    // its own share over its own host link at once).
    r.lora_adapter_bytes = Bytes(0);
    for (const memory::DeviceBudget& d : b.result.devices) {
      r.lora_adapter_bytes = max(r.lora_adapter_bytes, Bytes(d.lora_weights.count() /
                                                             e.lora->max_loras));
    }
  }
  if (b.speculative) {
    const std::int64_t k = b.speculative->config.num_speculative_tokens;
    r.num_speculative_tokens = k;
    r.limits.num_lookahead_tokens = k;
    r.expected_tokens_per_step = b.speculative->config.expected_tokens_per_step();
  }
}

}  // namespace

namespace {

// A pool's setting that differs from the one both pools would take: a budget problem on the
// shared field is reported on the pool's own one (serving.prefill_tp, serving.decode_gpu, ...).
struct PoolField {
  std::string_view shared;  // "engine.tp", "hardware.gpu"
  std::string_view own;     // "" when the pool takes the shared value
};

// A pool's budget, its problems on `fields` reported on the pool's own settings.
BudgetAnswer pool_budget(BudgetRequest req, bool chunked, std::initializer_list<PoolField> fields) {
  req.suggest = false;
  req.enable_chunked_prefill = chunked;
  bool renamed = false;
  for (const PoolField& f : fields) renamed = renamed || !f.own.empty();
  if (!renamed) return answer_budget(req, checked_project_root());
  try {
    return answer_budget(req, checked_project_root());
  } catch (const ConfigError& e) {
    ValidationReport out;
    for (const Problem& p : e.report().problems()) {
      std::string field = p.field;
      for (const PoolField& f : fields) {
        if (!f.own.empty() && p.field == f.shared) field = std::string(f.own);
      }
      out.error(field, p.message, p.where);
    }
    throw ConfigError(out);
  }
}

}  // namespace

const io::ClusterTopology& KvLinkTopologies::get(const std::string& topology,
                                                 const hardware::DeviceSpec& device) {
  const std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[{topology, device.id}];
  if (!e.cluster && !e.error) {
    try {
      e.cluster = io::cluster_topology_for_device(topology, device,
                                                  checked_project_root() / "topologies");
    } catch (const ConfigError& error) {
      e.error = error;
    }
  }
  if (e.error) throw *e.error;
  return *e.cluster;
}

std::int64_t KvLinkTopologies::num_reads() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::int64_t>(entries_.size());
}

KvTransferLink kv_transfer_link(const ServeAnswer& a) {
  const BudgetAnswer& dec = a.budget;
  const BudgetAnswer& pre = *a.prefill_budget;
  const DisaggregatedServe& dis = *a.config.disaggregated;
  KvTransferLink l;
  Bytes per_device;
  for (const memory::DeviceBudget& d : dec.result.devices) {
    per_device = max(per_device, d.kv_bytes_per_token);
  }
  // Every TP rank of the decode instance holds its heads' KV (replicated heads included).
  l.bytes_per_token = dec.engine.tp * per_device;
  l.lanes = static_cast<std::int32_t>(std::min(dec.engine.tp, pre.engine.tp));
  KvLinkTopologies alone;
  const io::ClusterTopology& t =
      (dis.link_topologies ? *dis.link_topologies : alone).get(dis.topology, dec.device);
  const hardware::NodeSpec& node = *t.node;
  l.node = node.id;
  l.node_gpus = node.num_gpus;
  const std::int64_t gpus = std::int64_t{dis.prefill_instances} * pre.engine.tp +
                            std::int64_t{a.config.setup.num_replicas} * dec.engine.tp;
  const std::optional<Bandwidth> fabric = hardware::fabric_bandwidth(node, dec.device);
  // NOTE: a node sheet holds one GPU type, so pools on two types never share a node.
  if (pre.device.id == dec.device.id && gpus <= node.num_gpus && fabric) {
    l.kind = "intra-node";
    l.bandwidth = *fabric;
    l.latency = node.fabric.latency;
    return l;
  }
  l.kind = "inter-node";
  const comm::LinkModel dn = training::default_cluster_links(dec.device).inter;
  const comm::LinkModel pn = training::default_cluster_links(pre.device).inter;
  l.bandwidth = t.network_bandwidth.value_or(
      dn.bandwidth.bytes_per_second() <= pn.bandwidth.bytes_per_second() ? dn.bandwidth
                                                                          : pn.bandwidth);
  l.latency = t.network_latency.value_or(dn.latency);
  return l;
}

ServeAnswer prepare_serve(ServeConfig config) {
  ServeAnswer a;
  a.config = std::move(config);
  const bool chunked = a.config.setup.replica.limits.enable_chunked_prefill;
  const auto& dis = a.config.disaggregated;
  // A pool's own TP or GPU, where it differs from --tp / --gpu, takes its problems.
  const BudgetRequest& de = a.config.engine;
  a.budget = dis ? pool_budget(de, chunked,
                               {{"engine.tp", de.tp != dis->base_tp ? "serving.decode_tp" : ""},
                                {"hardware.gpu",
                                 de.gpu_id != dis->base_gpu ? "serving.decode_gpu" : ""}})
                 : pool_budget(de, chunked, {});
  if (dis) {
    const BudgetRequest& pe = dis->prefill_engine;
    a.prefill_budget = pool_budget(
        pe, chunked,
        {{"engine.tp", pe.tp != dis->base_tp ? "serving.prefill_tp" : ""},
         {"hardware.gpu", pe.gpu_id != dis->base_gpu ? "serving.prefill_gpu" : ""}});
    ValidationReport report;
    for (const BudgetAnswer* b : {&a.budget, &*a.prefill_budget}) {
      const char* pool = b == &a.budget ? "decode" : "prefill";
      if (b->engine.pp != 1) {
        report.error("engine.pp", fmt::format("a disaggregated {} pool runs without pipeline "
                                              "parallelism (PP 1), got {}", pool, b->engine.pp));
      }
      if (b->engine.data_parallel_size != 1) {
        report.error("engine.data_parallel_size",
                     fmt::format("a disaggregated {} pool runs without data parallelism, got {}",
                                 pool, b->engine.data_parallel_size));
      }
    }
    throw_if_errors(report);
  }
  a.feasible = a.budget.result.fits && (!a.prefill_budget || a.prefill_budget->result.fits);
  if (!a.feasible) {
    if (a.budget.result.fits) {
      a.budget.result.reason = "prefill pool: " + a.prefill_budget->result.reason;
    }
    return a;
  }
  if (dis) a.kv_link = kv_transfer_link(a);
  configure_replica(a.config, a.budget);
  if (dis) {
    // Both pools schedule as the setting says (async scheduling included: the prefill
    // instances' replica config is a copy of the decode one's).
    ServeConfig pre = a.config;
    configure_replica(pre, *a.prefill_budget);
    serving::Disaggregation& d = a.config.setup.disaggregation.emplace();
    d.num_prefill = dis->prefill_instances;
    d.prefill = pre.setup.replica;
    d.kv_bytes_per_token = a.kv_link->bytes_per_token;
    d.num_link_lanes = a.kv_link->lanes;
    d.link_bandwidth = a.kv_link->bandwidth;
    d.link_latency = a.kv_link->latency;
  }
  if (a.config.setup.dp_lockstep && a.budget.calibration) {
    throw ConfigError("hardware.calibration",
                      "the calibrated step-time model does not cover a data-parallel MoE group "
                      "(engine.data_parallel_size > 1): leave the calibration out");
  }
  serving::SchedulerRegistry schedulers;
  serving::register_builtin_schedulers(schedulers);
  serving::RouterRegistry routers;
  serving::register_builtin_routers(routers);
  ValidationReport limits;
  schedulers.find(a.config.setup.scheduler, "serving.scheduler")
      .validate(a.config.setup.replica.limits, limits);
  routers.find(a.config.setup.router, "serving.router");
  ValidationReport report;
  for (const Problem& p : limits.problems()) {
    // SchedulerLimits' fields by their settings' paths (sim/run/serve_options.hpp).
    const std::string path = p.field == "chunk_size" ? "serving.chunk_size" : "engine." + p.field;
    report.error(path, p.message, p.where);
  }
  throw_if_errors(report);
  return a;
}

StepListener::~StepListener() = default;

namespace {

// The step-time model of a run with a StepListener: the model's answers, each shown to it.
class ListenedTimeModel final : public serving::ExecutionTimeModel {
 public:
  ListenedTimeModel(const serving::ExecutionTimeModel& inner, StepListener& listener)
      : inner_(inner), listener_(listener) {}
  serving::StepTime step_time(const serving::BatchShape& batch) const override {
    const serving::StepTime t = inner_.step_time(batch);
    listener_.on_step(batch, t, inner_);
    return t;
  }
  std::string describe() const override { return inner_.describe(); }

 private:
  const serving::ExecutionTimeModel& inner_;
  StepListener& listener_;
};

// The validated band of the step-time source, and whether this setting lies inside what the
// band's measured runs cover.
std::string serve_error_band(const ServeAnswer& a) {
  const BudgetAnswer& b = a.budget;
  if (b.calibration) {
    return "calibrated step times: no measured serving run validates them yet; the profile's "
           "interpolation error between its measured points: `vramsim calibrate-report`";
  }
  const cost::ServeErrorBand& band = cost::kRooflineServeBand;
  std::string out = fmt::format("mean TTFT within {:.0f}%, TPOT {:.0f}%, E2E {:.0f}% on {}",
                                100 * band.ttft_mean, 100 * band.tpot_mean, 100 * band.e2e_mean,
                                band.validated_on);
  std::vector<std::string> outside;
  const auto& gpus = cost::kRooflineBandGpus;
  if (std::find(std::begin(gpus), std::end(gpus), b.device.id) == std::end(gpus)) {
    outside.push_back(fmt::format("GPU {}", b.device.id));
  }
  const memory::EngineConfig& e = b.engine;
  if (e.tp > cost::kRooflineBandMaxTp) outside.push_back(fmt::format("TP {}", e.tp));
  if (e.pp > 1) outside.push_back(fmt::format("PP {}", e.pp));
  if (b.model.moe) {
    outside.push_back(e.data_parallel_size > 1 || e.enable_expert_parallel
                          ? "MoE with DP/EP (the one measured run: TTFT -66%, TPOT -16%)"
                          : "MoE");
  }
  if (b.speculative) outside.push_back("speculative decoding");
  if (e.cpu_offload > Bytes(0)) outside.push_back("weight offload");
  if (e.lora) outside.push_back("LoRA");
  if (!outside.empty()) {
    out += fmt::format("; this setting lies outside them ({}), so the band is not a bound here",
                       fmt::join(outside, ", "));
  }
  return out;
}

}  // namespace

namespace {

// The roofline's engine options that follow the modelled vLLM release (vllm_version.hpp); the
// rest are the datasheet defaults.
serving::RooflineOptions roofline_options(const BudgetAnswer& b) {
  serving::RooflineOptions o;
  const std::optional<VllmVersion> version = parse_vllm_version(b.vllm_version);
  if (version) {
    const VllmBehaviour behaviour = vllm_behaviour(*version);
    o.mxfp4_triton_kernels = behaviour.mxfp4_triton_kernels;
    // V0 ran a step's decodes through their own kernel (flash_attn_with_kvcache), not in one
    // varlen call with the prefill chunks (mixed_batch_attention.hpp).
    o.fa2_mixed_batches = behaviour.v1_engine;
  }
  return o;
}

}  // namespace

void simulate_serve(ServeAnswer& a, serving::ServingObserver* observer, StepListener* steps) {
  VRAMSIM_CHECK(a.feasible, "simulate_serve on an infeasible configuration");
  serving::SchedulerRegistry schedulers;
  serving::register_builtin_schedulers(schedulers);
  serving::RouterRegistry routers;
  serving::register_builtin_routers(routers);
  const memory::EngineConfig& e = a.budget.engine;
  const model::Parallelism par{e.tp, e.pp};
  std::unique_ptr<serving::ExecutionTimeModel> prefill_model;
  if (a.prefill_budget) {
    const BudgetAnswer& pb = *a.prefill_budget;
    const model::Parallelism ppar{pb.engine.tp, pb.engine.pp};
    prefill_model =
        pb.calibration
            ? serving::make_calibrated_time_model(pb.model, pb.device, ppar, pb.engine.weights,
                                                  pb.engine.kv_cache_dtype, *pb.calibration,
                                                  roofline_options(pb))
            : serving::make_roofline_time_model(pb.model, pb.device, ppar, pb.engine.weights,
                                                pb.engine.kv_cache_dtype, roofline_options(pb),
                                                pb.expert_parallel);
    // NOTE: speculative decoding and LoRA wrap the decode pool's model only; the prefill pool
    // runs plain prompts (its one sampled token needs no drafts).
    a.config.setup.disaggregation->prefill_time_model = prefill_model.get();
  }
  std::optional<ListenedTimeModel> listened_prefill;  // both pools' steps go to `steps`
  if (prefill_model && steps != nullptr) {
    listened_prefill.emplace(*prefill_model, *steps);
    a.config.setup.disaggregation->prefill_time_model = &*listened_prefill;
  }
  std::unique_ptr<serving::ExecutionTimeModel> model =
      a.budget.calibration
          ? serving::make_calibrated_time_model(a.budget.model, a.budget.device, par, e.weights,
                                                e.kv_cache_dtype, *a.budget.calibration,
                                                roofline_options(a.budget))
          : serving::make_roofline_time_model(a.budget.model, a.budget.device, par, e.weights,
                                              e.kv_cache_dtype, roofline_options(a.budget),
                                              a.budget.expert_parallel);
  std::unique_ptr<serving::ExecutionTimeModel> draft;
  std::unique_ptr<serving::ExecutionTimeModel> speculative;
  if (a.budget.speculative) {
    const SpeculativeDraft& sd = *a.budget.speculative;
    // NOTE: the drafter's passes take the datasheet roofline even with a calibration profile:
    // the profile's tables are measured for the target's shapes.
    if (sd.pass_model) {
      draft = serving::make_roofline_time_model(*sd.pass_model, a.budget.device,
                                                model::Parallelism{e.tp, 1}, *sd.pass_weights,
                                                e.kv_cache_dtype, roofline_options(a.budget));
    }
    speculative = std::make_unique<serving::SpeculativeTimeModel>(
        *model, draft.get(), sd.config.num_speculative_tokens,
        std::string(serving::to_string(sd.config.method)));
  }
  std::unique_ptr<serving::ExecutionTimeModel> lora;
  if (e.lora) {
    // The adapters' products come with the target's passes, whichever model times them.
    lora = std::make_unique<serving::LoraTimeModel>(
        speculative ? *speculative : *model, a.budget.model, a.budget.device, par, *e.lora,
        roofline_options(a.budget).efficiencies(a.budget.device));
  }
  const serving::ExecutionTimeModel& unlistened =
      lora ? *lora : speculative ? *speculative : *model;
  std::optional<ListenedTimeModel> listened;
  if (steps != nullptr) listened.emplace(unlistened, *steps);
  const serving::ExecutionTimeModel& step_model =
      listened ? static_cast<const serving::ExecutionTimeModel&>(*listened) : unlistened;
  a.cost_model = step_model.describe();
  a.error_band = serve_error_band(a);
  std::unique_ptr<serving::TraceSource> trace = serving::open_trace(a.config.trace);
  a.trace_description = trace->describe();
  a.result = serving::simulate_serving(*trace, a.config.setup, step_model, schedulers, routers,
                                       observer);
}

}  // namespace vramsim::run
