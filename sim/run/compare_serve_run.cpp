#include "sim/run/compare_serve_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "sim/core/error.hpp"
#include "sim/run/compare_serve_why.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/gpu_prices.hpp"

namespace vramsim::run {
namespace {

double p99(const serving::LatencyHistogram& h) { return h.quantile(0.99).seconds(); }

// The capacity and its bracket on the search's axis: requests/s, or clients in a closed loop.
double cap_of(const CapacityServeAnswer& c) {
  return c.axis == CapacityAxis::kMaxConcurrency ? static_cast<double>(c.max_concurrency)
                                                 : c.max_rate_per_s;
}
double low_of(const CapacityServeAnswer& c) {
  return c.axis == CapacityAxis::kMaxConcurrency ? static_cast<double>(c.concurrency_low)
                                                 : c.bracket_low;
}
double high_of(const CapacityServeAnswer& c) {
  return c.axis == CapacityAxis::kMaxConcurrency ? static_cast<double>(c.concurrency_high)
                                                 : c.bracket_high;
}
// "12.3 requests/s" or "48 clients".
std::string load_text(const CapacityServeAnswer& c, double load) {
  return c.axis == CapacityAxis::kMaxConcurrency ? fmt::format("{:.0f} clients", load)
                                                 : fmt::format("{:.3g} requests/s", load);
}

// `config` with its arrivals at `rate` requests/s, as the capacity search scales them: a
// synthetic workload's rate, or a trace's time scale against the rate its probe measured.
ServeConfig at_rate(const ServeConfig& config, const CapacityServeAnswer& cap, double rate) {
  ServeConfig c = config;
  if (cap.axis == CapacityAxis::kMaxConcurrency) {
    // Closed loop: the load is the client count.
    c.setup.clients.max_concurrency = static_cast<std::int32_t>(std::llround(rate));
    return c;
  }
  if (c.trace.kind == serving::TraceKind::kSynthetic) {
    c.trace.synthetic.arrivals.rate_per_s = rate;
  } else if (cap.trace_probe && cap.trace_probe->rate_per_s > 0.0) {
    c.trace.transforms.time_scale =
        config.trace.transforms.time_scale * rate / cap.trace_probe->rate_per_s;
  }
  return c;
}

std::string missed_slo(const CapacityServeAnswer& cap) {
  if (high_of(cap) <= 0.0) return "";
  for (const CapacityRun& r : cap.runs) {
    const double load = cap.axis == CapacityAxis::kMaxConcurrency
                            ? static_cast<double>(r.max_concurrency)
                            : r.rate_per_s;
    if (r.meets || load != high_of(cap)) continue;
    const std::string s = detail::missed_slo_text(r.ttft_p99, r.tpot_p99, r.e2e_p99,
                                                  {cap.ttft_p99, cap.tpot_p99, cap.e2e_p99});
    return s.empty() ? "no request finished" : s;
  }
  return "";
}

ServeCandidate run_option(std::string name, int num_gpus, ServeConfig config,
                          const CompareServe& q, const serving::SloSpec& slo) {
  ServeCandidate o;
  o.name = std::move(name);
  o.num_gpus = num_gpus;
  try {
    o.answer = prepare_serve(config);
  } catch (const ConfigError& e) {
    // A split the model does not allow (TP that does not divide the heads, PP beyond the
    // layers) is an answer for this option, not an input error.
    o.reason = e.report().problems().empty() ? e.what() : e.report().problems().front().message;
    return o;
  }
  if (!o.answer.feasible) {
    o.reason = o.answer.budget.result.reason;
    return o;
  }
  simulate_serve(o.answer, nullptr);
  o.feasible = true;
  CapacitySearch search;
  search.base = config;
  search.ttft_p99 = slo.ttft;
  search.tpot_p99 = slo.tpot;
  search.e2e_p99 = slo.e2e;
  search.precision = q.precision;
  search.max_runs = q.max_runs;
  // A closed loop (clients sending all their requests at once) has no rate: its capacity is
  // the most concurrent clients within the SLOs.
  if (config.setup.clients.send_all_at_start) search.axis = CapacityAxis::kMaxConcurrency;
  if (q.on_run) {
    search.on_run = [&q, &o](const CapacityRun& r) { q.on_run(o.name, r); };
  }
  o.capacity = capacity_serve(search);
  const double why_rate = cap_of(o.capacity) > 0.0 ? cap_of(o.capacity) : high_of(o.capacity);
  if (why_rate > 0.0) {
    o.at_capacity = prepare_serve(at_rate(config, o.capacity, why_rate));
    const detail::WhyReplay w = detail::replay_why(o.at_capacity, slo);
    o.why = w.why;
    if (cap_of(o.capacity) > 0.0) o.slo_output_tokens_per_s = w.slo_output_tokens_per_s;
  }
  o.why.missed_slo = missed_slo(o.capacity);
  if (cap_of(o.capacity) <= 0.0) {
    o.why.detail = fmt::format("the SLOs are not met even at {} ({}); there: {}",
                               load_text(o.capacity, high_of(o.capacity)), o.why.missed_slo,
                               o.why.detail);
  }
  return o;
}

std::string link_name(const hardware::DeviceSpec& d) {
  if (d.peer_link && !d.peer_link->bridge_only) {
    return d.peer_link->kind == hardware::PeerLinkKind::kNvlink ? "NVLink" : "Infinity Fabric";
  }
  return "PCIe";
}

double cap_of(const ServeCandidate& o) { return cap_of(o.capacity); }

// p99 TTFT then p99 TPOT at the tie's common rate: lower is better.
bool faster_at_tie(const ServeCandidate& a, const ServeCandidate& b) {
  return std::make_pair(a.tie_ttft_p99->seconds(), a.tie_tpot_p99->seconds()) <
         std::make_pair(b.tie_ttft_p99->seconds(), b.tie_tpot_p99->seconds());
}

// Picks the best option: the highest capacity, and among those within noise of it the lowest
// p99 latencies at the lower of their capacities (one more replay each).
int pick_best(std::vector<ServeCandidate>& options, const std::vector<ServeConfig>& configs) {
  int best = -1;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (!options[i].feasible) continue;
    if (best < 0 || cap_of(options[i]) > cap_of(options[static_cast<std::size_t>(best)])) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0 || cap_of(options[static_cast<std::size_t>(best)]) <= 0.0) return best;
  std::vector<std::size_t> tied;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (options[i].feasible && cap_of(options[i]) > 0.0 &&
        within_noise(options[i].capacity, options[static_cast<std::size_t>(best)].capacity)) {
      tied.push_back(i);
    }
  }
  if (tied.size() < 2) return best;
  double rate = cap_of(options[tied.front()]);
  for (std::size_t i : tied) rate = std::min(rate, cap_of(options[i]));
  for (std::size_t i : tied) {
    ServeAnswer s = prepare_serve(at_rate(configs[i], options[i].capacity, rate));
    simulate_serve(s, nullptr);
    options[i].tie_rate_per_s = rate;
    options[i].tie_ttft_p99 = s.result.metrics.ttft.quantile(0.99);
    options[i].tie_tpot_p99 = s.result.metrics.tpot.quantile(0.99);
  }
  std::size_t pick = tied.front();
  for (std::size_t i : tied) {
    if (faster_at_tie(options[i], options[pick])) pick = i;
  }
  return static_cast<int>(pick);
}

std::string capacity_text(const ServeCandidate& o) {
  const bool clients = o.capacity.axis == CapacityAxis::kMaxConcurrency;
  if (cap_of(o) <= 0.0) return clients ? "not even one client meets the SLOs"
                                       : "no rate meets the SLOs";
  if (high_of(o.capacity) <= 0.0) {
    return fmt::format("at least {} (no {} up to the search's cap misses the SLOs{})",
                       load_text(o.capacity, cap_of(o)), clients ? "client count" : "rate",
                       clients ? "" : ": too few requests to queue");
  }
  return load_text(o.capacity, cap_of(o));
}

std::string verdict(const CompareServeAnswer& c, const std::string& gpu) {
  if (c.best < 0) return fmt::format("no option with {} GPUs could run", c.options.back().num_gpus);
  const ServeCandidate& base = c.options.front();
  const ServeCandidate& best = c.options[static_cast<std::size_t>(c.best)];
  const std::string noise = fmt::format("{:.0f}%", 100 * c.precision);
  std::string v;
  if (!base.feasible) {
    v = fmt::format("the model does not fit one {} ({}); with {} GPUs {} serves the most: {} "
                    "within the SLOs, bound by {}",
                    gpu, base.reason, best.num_gpus, best.name, capacity_text(best), best.why.kind);
  } else if (cap_of(base) <= 0.0 && cap_of(best) <= 0.0) {
    v = fmt::format("no option meets the SLOs at any {} ({} on one GPU: {})",
                    base.capacity.axis == CapacityAxis::kMaxConcurrency ? "client count" : "rate",
                    gpu, base.why.missed_slo);
  } else if (c.best == 0 || within_noise(best.capacity, base.capacity)) {
    const ServeCandidate* multi = nullptr;
    for (const ServeCandidate& o : c.options) {
      if (o.feasible && o.num_gpus > 1 && (multi == nullptr || cap_of(o) > cap_of(*multi))) {
        multi = &o;
      }
    }
    v = fmt::format("{} {} over {} does not raise the capacity within the SLOs: one GPU "
                    "serves {}",
                    c.options.back().num_gpus == 2 ? "a second" : "more than one", gpu, c.link,
                    capacity_text(base));
    if (multi != nullptr) {
      v += fmt::format(", the best {}-GPU option, {}, {} ({:.2f}x{})", multi->num_gpus,
                       multi->name, capacity_text(*multi), multi->capacity_ratio,
                       within_noise(multi->capacity, base.capacity)
                           ? ", within the search's " + noise + " noise"
                           : "");
    }
    v += fmt::format("; one GPU is bound by {}", base.why.kind);
  } else {
    const std::string who =
        best.kv_tier_option ? fmt::format("a KV offload tier on one {}", gpu)
        : best.num_gpus == 1 ? fmt::format("a bigger batch on one {}", gpu)
        : best.num_gpus == 2
            ? fmt::format("a second {} over {}", gpu, c.link)
            : fmt::format("{} {} GPUs over {}", best.num_gpus, gpu, c.link);
    v = fmt::format("{} {}: {} raises the capacity within the SLOs from {} on one GPU to {} "
                    "({:.2f}x, scaling efficiency {:.0f}%), bound by {}",
                    who, best.num_gpus == 1 || best.num_gpus == 2 ? "helps" : "help", best.name,
                    capacity_text(base), capacity_text(best), best.capacity_ratio,
                    100 * best.scaling_efficiency, best.why.kind);
    v += fmt::format("; one GPU is bound by {}", base.why.kind);
  }
  // Options tied with the pick, and how their latencies compare.
  for (std::size_t i = 0; i < c.options.size(); ++i) {
    const ServeCandidate& o = c.options[i];
    if (static_cast<int>(i) == c.best || !o.tie_rate_per_s || !best.tie_rate_per_s) continue;
    v += fmt::format("; {} is within the {} noise of {} ({}), with p99 TTFT {:.3f} s against "
                     "{:.3f} s at {}",
                     o.name, noise, best.name, load_text(o.capacity, cap_of(o)),
                     o.tie_ttft_p99->seconds(), best.tie_ttft_p99->seconds(),
                     load_text(o.capacity, *o.tie_rate_per_s));
  }
  if (base.feasible) {
    const auto& bm = base.answer.result.metrics;
    if (bm.num_arrived > 0 && bm.num_good == bm.num_arrived) {
      v += fmt::format("; at the given {} one GPU already keeps all {} requests within the SLOs",
                       c.axis == CapacityAxis::kMaxConcurrency ? "client count" : "rate",
                       bm.num_arrived);
    }
    // Tensor parallelism that makes requests slower than one GPU does (all-reduces over a slow
    // link outweighing the split matmuls) is worth saying whatever the rest of the verdict is.
    for (const ServeCandidate& o : c.options) {
      if (!o.feasible || o.name.rfind("TP=", 0) != 0) continue;
      const auto& om = o.answer.result.metrics;
      if (p99(om.ttft) > p99(bm.ttft) || p99(om.tpot) > p99(bm.tpot)) {
        v += fmt::format("; {} over {} makes the slowest requests slower than one GPU does at "
                         "the given rate (p99 TTFT {:.3f} s against {:.3f} s, p99 TPOT {:.4f} s "
                         "against {:.4f} s)",
                         o.name, c.link, p99(om.ttft), p99(bm.ttft), p99(om.tpot), p99(bm.tpot));
      }
    }
  }
  // The cheapest per SLO-meeting token, when priced.
  const ServeCandidate* cheapest = nullptr;
  for (const ServeCandidate& o : c.options) {
    if (!o.cost_per_million_slo_output_tokens_usd) continue;
    if (cheapest == nullptr || *o.cost_per_million_slo_output_tokens_usd <
                                   *cheapest->cost_per_million_slo_output_tokens_usd) {
      cheapest = &o;
    }
  }
  if (cheapest != nullptr) {
    v += fmt::format("; cheapest per million SLO-meeting output tokens at capacity: {} (${:.3f})",
                     cheapest->name, *cheapest->cost_per_million_slo_output_tokens_usd);
  }
  return v;
}

}  // namespace

double goodput_requests_per_s(const ServeAnswer& a) {
  const double d = a.result.duration_s();
  return d > 0.0 ? static_cast<double>(a.result.metrics.num_good) / d : 0.0;
}

double output_tokens_per_s(const ServeAnswer& a) {
  const double d = a.result.duration_s();
  return d > 0.0 ? static_cast<double>(a.result.metrics.num_output_tokens) / d : 0.0;
}

bool within_noise(const CapacityServeAnswer& a, const CapacityServeAnswer& b) {
  const auto high = [](const CapacityServeAnswer& x) {
    return high_of(x) > 0.0 ? high_of(x) : HUGE_VAL;
  };
  return low_of(a) <= high(b) && low_of(b) <= high(a);
}

bool any_kv_tier(const CompareServeAnswer& c) {
  return std::any_of(c.options.begin(), c.options.end(), [](const ServeCandidate& o) {
    return o.feasible && o.answer.budget.kv_offload.num_blocks > 0;
  });
}

std::string kv_tier_text(const ServeCandidate& o) {
  const KvOffloadBudget& k = o.answer.budget.kv_offload;
  if (k.num_blocks == 0) return "none";
  std::string s = fmt::format("{} host ({} blocks)", format_bytes(k.host_bytes), k.num_blocks);
  if (k.disk_num_blocks > 0) s += fmt::format(" + {} disk", format_bytes(k.disk_bytes));
  return s + " per replica";
}

serving::SloSpec default_serving_slo() {
  serving::SloSpec s;
  s.ttft = seconds(2);
  s.tpot = milliseconds(100);
  return s;
}

CompareServeAnswer compare_serve(const CompareServe& q) {
  ValidationReport report;
  if (q.num_gpus < 2 || q.num_gpus > 64) {
    report.error("compare.num_gpus", fmt::format("must be in [2, 64], got {}", q.num_gpus));
  }
  if (q.price_per_gpu_hour &&
      !(*q.price_per_gpu_hour > 0.0 && std::isfinite(*q.price_per_gpu_hour))) {
    report.error("compare.price_per_gpu_hour", "must be > 0 and finite");
  }
  if (!(q.precision > 0.0 && q.precision < 1.0)) {
    report.error("compare.precision", fmt::format("must be in (0, 1), got {}", q.precision));
  }
  if (q.max_runs < 2) report.error("compare.max_runs", "must be >= 2");
  if (q.kv_tier_option && q.base.engine.kv_offloading_size == Bytes(0)) {
    report.error("compare.kv_tier",
                 "compares one GPU with the base's KV offload tier against the GPU options "
                 "without it: give the tier, --kv-offloading-size (e.g. 200GiB)");
  }
  throw_if_errors(report);
  ServeConfig base = q.base;
  // --compare-kv-tier: the tier is its own option; the GPU options run without it.
  const Bytes tier_host = base.engine.kv_offloading_size;
  const Bytes tier_disk = base.engine.kv_offloading_disk_size;
  const std::string tier_backend = base.engine.kv_offloading_backend;
  const std::string tier_lmcache = base.engine.lmcache_config;
  if (q.kv_tier_option) {
    base.engine.kv_offloading_size = Bytes(0);
    base.engine.kv_offloading_disk_size = Bytes(0);
    // LMCache without a size would still size its tier from its configuration or defaults.
    base.engine.kv_offloading_backend = "native";
    base.engine.lmcache_config.clear();
  }
  CompareServeAnswer c;
  c.precision = q.precision;
  if (q.price_per_gpu_hour) {
    c.price_per_gpu_hour = q.price_per_gpu_hour;
    c.price_source = "--gpu-price-per-hour";
  } else if (const auto p =
                 price_per_gpu_hour(checked_project_root() / "topologies", base.engine.gpu_id)) {
    c.price_per_gpu_hour = p->usd_per_gpu_hour;
    c.price_source = "topologies/prices.toml: " + p->source;
  }
  if (!base.setup.slo.any()) {
    base.setup.slo = default_serving_slo();
    c.default_slo = true;
  }
  c.slo = base.setup.slo;
  c.axis = base.setup.clients.send_all_at_start ? CapacityAxis::kMaxConcurrency
                                                : CapacityAxis::kRate;
  base.engine.tp = 1;
  base.engine.pp = 1;
  base.engine.data_parallel_size = 1;
  base.engine.enable_expert_parallel = false;
  base.setup.num_replicas = 1;
  // The split is compare's own (the CLI refuses the disaggregated flags and a scenario's
  // serving.prefill_* / decode_* fields, naming them).
  base.disaggregated.reset();
  const int n = q.num_gpus;
  std::vector<ServeConfig> configs;
  const auto add = [&](std::string name, int gpus, ServeConfig config) {
    c.options.push_back(run_option(std::move(name), gpus, config, q, c.slo));
    configs.push_back(std::move(config));
  };
  add("1 GPU", 1, base);
  ServeConfig tp = base;
  tp.engine.tp = n;
  add(fmt::format("TP={}", n), n, tp);
  // V0's scheduler (a release before 0.8) runs neither pipeline parallelism (one scheduler
  // per stage, not modelled) nor a disaggregated layout (serve_config refuses both).
  const bool v0 = base.setup.scheduler == "vllm-v0";
  if (!v0) {
    ServeConfig pp = base;
    pp.engine.pp = n;
    add(fmt::format("PP={}", n), n, pp);
  }
  ServeConfig replicas = base;
  replicas.setup.num_replicas = n;
  if (replicas.setup.router == "round-robin") replicas.setup.router = "least-outstanding-tokens";
  add(fmt::format("{} replicas", n), n, replicas);
  // An MoE model: vLLM's data parallelism with expert parallelism, as its MoE deployments run
  // (attention replicated per DP rank, each with its own batch and KV cache, the routed experts
  // sharded over the N GPUs, the ranks stepping together).
  bool moe = false;
  for (const ServeCandidate& o : c.options) {
    if (!o.answer.budget.model.name.empty()) moe = o.answer.budget.model.moe.has_value();
  }
  if (moe) {
    ServeConfig dp = base;
    dp.engine.data_parallel_size = n;
    dp.engine.enable_expert_parallel = true;
    if (dp.setup.router == "round-robin") dp.setup.router = "least-outstanding-tokens";
    add(fmt::format("DP={}+EP", n), n, dp);
  }
  if (n == 2 && !v0) {
    // Disaggregated prefill/decode on the two GPUs: one prefill and one decode instance, the
    // prompts' KV over the GPUs' peer link (serving::Disaggregation).
    ServeConfig pd = base;
    DisaggregatedServe& d = pd.disaggregated.emplace();
    d.prefill_instances = 1;
    d.prefill_engine = base.engine;
    d.base_tp = base.engine.tp;
    d.base_gpu = base.engine.gpu_id;
    // Read once for this option's runs (its capacity search and the replays after it).
    d.link_topologies = std::make_shared<KvLinkTopologies>();
    add("1P1D", n, pd);
  }
  if (q.kv_tier_option) {
    // The one-GPU base with its tier given back.
    ServeConfig one = base;
    one.engine.kv_offloading_size = tier_host;
    one.engine.kv_offloading_disk_size = tier_disk;
    one.engine.kv_offloading_backend = tier_backend;
    one.engine.lmcache_config = tier_lmcache;
    add("1 GPU + KV tier", 1, one);
    c.options.back().kv_tier_option = true;
  }
  if (c.options.front().feasible) {
    // vLLM's limits times N on the same GPU: only worth it if the KV cache holds the batch.
    const memory::EngineConfig& e = c.options.front().answer.budget.engine;
    ServeConfig big = base;
    big.engine.max_num_seqs = e.max_num_seqs * n;
    big.engine.max_num_batched_tokens = e.max_num_batched_tokens * n;
    add(fmt::format("1 GPU, {}x batch", n), 1, big);
  }
  const ServeCandidate& first = c.options.front();
  c.link =
      link_name(first.feasible ? first.answer.budget.device : c.options[1].answer.budget.device);
  const auto ratio = [](double x, double base_value) {
    return base_value > 0.0 ? x / base_value : 0.0;
  };
  for (ServeCandidate& o : c.options) {
    if (!o.feasible) continue;
    if (first.feasible) {
      o.throughput_ratio =
          ratio(output_tokens_per_s(o.answer), output_tokens_per_s(first.answer));
      o.goodput_ratio =
          ratio(goodput_requests_per_s(o.answer), goodput_requests_per_s(first.answer));
      o.capacity_ratio = ratio(cap_of(o), cap_of(first));
      o.scaling_efficiency = o.capacity_ratio / o.num_gpus;
    }
    if (c.price_per_gpu_hour && o.slo_output_tokens_per_s > 0.0) {
      o.cost_per_million_slo_output_tokens_usd =
          *c.price_per_gpu_hour * o.num_gpus / 3600.0 / o.slo_output_tokens_per_s * 1e6;
    }
  }
  c.best = pick_best(c.options, configs);
  std::string gpu = base.engine.gpu_id;
  for (const ServeCandidate& o : c.options) {
    if (!o.answer.budget.device.id.empty()) {
      gpu = o.answer.budget.device.name;
      break;
    }
  }
  c.verdict = verdict(c, gpu);
  return c;
}

}  // namespace vramsim::run
