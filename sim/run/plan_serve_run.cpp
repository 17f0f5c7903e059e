#include "sim/run/plan_serve_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "sim/run/compare_serve_why.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/gpu_prices.hpp"
#include "sim/run/plan_serve_host_memory.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "sim/run/plan_serve_space.hpp"
#include "sim/run/sweep_output.hpp"
#include "sim/run/sweep_parallel.hpp"
#include "sim/serving/traces/trace_factory.hpp"

namespace vramsim::run {

std::string_view to_string(ServePlanStatus s) { return name_of(kServePlanStatuses, s); }
std::optional<ServePlanStatus> serve_plan_status_from_string(std::string_view s) {
  return parse_name(kServePlanStatuses, s);
}

std::optional<double> PlanServeRow::usd_per_hour() const {
  if (!usd_per_gpu_hour) return std::nullopt;
  if (!mixed()) return *usd_per_gpu_hour * static_cast<double>(num_gpus());
  if (!prefill_usd_per_gpu_hour) return std::nullopt;
  return *prefill_usd_per_gpu_hour * static_cast<double>(prefill_gpus()) +
         *usd_per_gpu_hour * static_cast<double>(decode_gpus());
}

std::string PlanServeRow::kv_tier_text() const {
  if (kv_tier.host == Bytes(0)) return "none";
  if (kv_tier.disk == Bytes(0)) return exact_bytes_text(kv_tier.host);
  return fmt::format("{} + disk {}", exact_bytes_text(kv_tier.host),
                     exact_bytes_text(kv_tier.disk));
}

std::string PlanServeRow::pools_text() const {
  if (!mixed()) return fmt::format("{} TP {}", gpu, tp);
  return fmt::format("P {} TP {} x{} / D {} TP {} x{}", prefill_gpu, prefill_tp,
                     prefill_instances, gpu, tp, decode_instances);
}

std::optional<double> PlanServeRow::usd_per_million_slo_output_tokens() const {
  const std::optional<double> h = usd_per_hour();
  if (!h || !(slo_output_tokens_per_s > 0.0)) return std::nullopt;
  return *h / 3600.0 / slo_output_tokens_per_s * 1e6;
}

std::string PlanServeRow::flags() const {
  const std::string instances =
      prefill_instances > 0 ? fmt::format("--prefill-instances {} --decode-instances {}",
                                          prefill_instances, decode_instances)
                            : fmt::format("--replicas {}", replicas);
  std::string s = fmt::format("--gpu {} --tp {} --pp {} {} --quantization {} --kv-cache-dtype {}",
                              gpu, tp, pp, instances, quantization, kv_cache_dtype);
  if (mixed()) s += fmt::format(" --prefill-gpu {} --prefill-tp {}", prefill_gpu, prefill_tp);
  if (max_num_seqs > 0) s += fmt::format(" --max-num-seqs {}", max_num_seqs);
  if (max_num_batched_tokens > 0) {
    s += fmt::format(" --max-num-batched-tokens {}", max_num_batched_tokens);
  }
  if (kv_tier.host > Bytes(0)) {
    s += fmt::format(" --kv-offloading-size {}", exact_bytes_text(kv_tier.host));
  }
  if (kv_tier.disk > Bytes(0)) {
    s += fmt::format(" --kv-offloading-disk-size {}", exact_bytes_text(kv_tier.disk));
  }
  return s;
}

namespace {

std::string first_problem(const ConfigError& e) {
  if (e.report().problems().empty()) return e.what();
  const Problem& p = e.report().problems().front();
  return p.field.empty() ? p.message : p.field + ": " + p.message;
}

std::string missed_text(const PlanServeRow& r, const serving::SloSpec& slo) {
  std::string s = detail::missed_slo_text(r.ttft_p99, r.tpot_p99, r.e2e_p99, slo);
  if (r.num_finished == 0) s = "no request finished";
  if (r.stopped_early) {
    s += fmt::format(" (stopped early after {} requests: the {} p99 was sure to miss)",
                     r.num_finished, r.stopped_on);
  }
  return s;
}

double slo_ratio(const PlanServeRow& r, const serving::SloSpec& slo) {
  double worst = 0.0;
  const auto add = [&](Duration got, const std::optional<Duration>& target) {
    if (target) worst = std::max(worst, got.seconds() / target->seconds());
  };
  add(r.ttft_p99, slo.ttft);
  add(r.tpot_p99, slo.tpot);
  add(r.e2e_p99, slo.e2e);
  // Finite, so that it survives the JSON of the journal.
  return r.num_finished == 0 ? std::numeric_limits<double>::max() : worst;
}

// What every configuration shares: the base options and the objectives.
struct Base {
  ServeOptions options;
  serving::SloSpec slo;
  bool early_stop = true;
  std::int64_t num_requests_bound = 0;  // the workload's requests (P99Stop::max_requests)
  std::optional<Bytes> max_host_memory;  // --max-host-memory: the KV tiers' host memory cap
  /// Without --max-host-memory: each row's node sheets bound its tiers per node (host_memory).
  bool node_host_memory = false;
  /// The KV link's topology, read once per decode GPU type for the whole search (and its
  /// capacity searches) instead of once per disaggregated configuration.
  std::shared_ptr<KvLinkTopologies> link_topologies = std::make_shared<KvLinkTopologies>();
};

ServeOptions options_of(const Base& b, const PlanServeRow& r) {
  ServeOptions o = b.options;
  o.gpu = r.gpu;
  o.tp = r.tp;
  o.pp = r.pp;
  o.replicas = r.prefill_instances > 0 ? 1 : r.replicas;
  o.prefill_instances = r.prefill_instances;
  o.decode_instances = r.decode_instances;
  if (r.mixed()) {
    o.prefill_gpu = r.prefill_gpu;
    o.prefill_tp = r.prefill_tp;
  }
  o.quantization = r.quantization;
  o.kv_cache_dtype = r.kv_cache_dtype;
  o.max_num_seqs = r.max_num_seqs;
  o.max_num_batched_tokens = r.max_num_batched_tokens;
  o.kv_offloading_size = r.kv_tier.host;
  o.kv_offloading_disk_size = r.kv_tier.disk;
  if (r.kv_tier.disk == Bytes(0)) {
    // The base's disk bandwidths are for the rows with a disk tier (serve refuses them alone).
    o.kv_offloading_disk_read_bandwidth.clear();
    o.kv_offloading_disk_write_bandwidth.clear();
  }
  return o;
}

// The configuration of row `r`, sized; nullopt with the row's skip status set otherwise.
std::optional<ServeAnswer> prepare_row(const Base& b, PlanServeRow& r) {
  ServeAnswer a;
  try {
    ServeConfig c = serve_config(options_of(b, r));
    if (c.disaggregated) c.disaggregated->link_topologies = b.link_topologies;
    c.engine.suggest = false;
    c.setup.slo = b.slo;
    a = prepare_serve(std::move(c));
  } catch (const ConfigError& e) {
    r.status = ServePlanStatus::kInvalid;
    r.reason = first_problem(e);
    return std::nullopt;
  }
  r.engine_max_num_seqs = a.budget.engine.max_num_seqs;
  r.engine_max_num_batched_tokens = a.budget.engine.max_num_batched_tokens;
  r.num_gpu_blocks = a.budget.result.num_gpu_blocks;
  if (!a.feasible) {
    r.status = ServePlanStatus::kDoesNotFit;
    r.reason = a.budget.result.reason;
    // A mixed layout's pools differ: say which one does not fit, on which GPU and TP.
    if (r.mixed()) {
      r.reason = a.budget.result.fits
                     ? fmt::format("prefill pool ({} TP {}): {}", r.prefill_gpu, r.prefill_tp,
                                   a.prefill_budget->result.reason)
                     : fmt::format("decode pool ({} TP {}): {}", r.gpu, r.tp, r.reason);
    }
    return std::nullopt;
  }
  // Each vLLM instance (and DP rank) pins a tier of its own.
  const std::int64_t instances =
      r.prefill_instances > 0 ? r.prefill_instances + r.decode_instances : r.replicas;
  const std::int64_t tiers = instances * std::max<std::int64_t>(1, b.options.data_parallel_size);
  r.host_memory_bytes = tiers * a.budget.kv_offload.host_bytes;
  r.disk_bytes = tiers * a.budget.kv_offload.disk_bytes;
  if (b.max_host_memory && r.host_memory_bytes > *b.max_host_memory) {
    r.status = ServePlanStatus::kOverMaxHostMemory;
    r.reason = fmt::format("KV tiers take {} of host memory ({} instances x {}) > "
                           "--max-host-memory {}",
                           format_bytes(r.host_memory_bytes), tiers,
                           format_bytes(a.budget.kv_offload.host_bytes),
                           format_bytes(*b.max_host_memory));
    return std::nullopt;
  }
  if (b.node_host_memory && r.host_memory_bytes > Bytes(0)) {
    std::optional<std::string> over;
    try {
      over = over_node_host_memory(*b.link_topologies, b.options, r, a);
    } catch (const ConfigError& e) {
      r.status = ServePlanStatus::kInvalid;
      r.reason = first_problem(e);
      return std::nullopt;
    }
    if (over) {
      r.status = ServePlanStatus::kOverMaxHostMemory;
      r.reason = *over;
      return std::nullopt;
    }
  }
  return a;
}

PlanServeRow evaluate_row(const Base& b, PlanServeRow r) {
  std::optional<ServeAnswer> a = prepare_row(b, r);
  if (!a) return r;
  if (b.early_stop) {
    a->config.setup.p99_stop = serving::P99Stop{b.slo, b.num_requests_bound};
  }
  try {
    simulate_serve(*a, nullptr);
  } catch (const ConfigError& e) {  // more requests in the system than the limit, say
    r.status = ServePlanStatus::kInvalid;
    r.reason = first_problem(e);
    return r;
  }
  const serving::ServingResult& res = a->result;
  const serving::ServingMetrics& m = res.metrics;
  r.stopped_early = res.stopped_early;
  r.stopped_on = res.stopped_on;
  r.num_finished = m.num_finished;
  r.num_good = m.num_good;
  r.ttft_p99 = m.ttft.quantile(serving::P99Stop::kQuantile);
  r.tpot_p99 = m.tpot.quantile(serving::P99Stop::kQuantile);
  r.e2e_p99 = m.e2e.quantile(serving::P99Stop::kQuantile);
  r.simulated_s = res.duration_s();
  r.gpu_prefix_hit_rate = res.gpu_prefix_hit_rate();
  r.cpu_prefix_hit_rate = res.offload_prefix_hit_rate();
  r.disk_prefix_hit_rate = res.disk_prefix_hit_rate();
  r.output_tokens_per_s = output_tokens_per_s(*a);
  r.goodput_requests_per_s = goodput_requests_per_s(*a);
  r.slo_output_tokens_per_s =
      r.simulated_s > 0.0 ? static_cast<double>(m.num_good_output_tokens) / r.simulated_s : 0.0;
  // capacity serve's verdict (capacity_serve_run.cpp, evaluate).
  const bool meets = !res.stopped_early && m.num_finished > 0 &&
                     (!b.slo.ttft || r.ttft_p99 <= *b.slo.ttft) &&
                     (!b.slo.tpot || r.tpot_p99 <= *b.slo.tpot) &&
                     (!b.slo.e2e || r.e2e_p99 <= *b.slo.e2e);
  r.status = meets ? ServePlanStatus::kMeets : ServePlanStatus::kMisses;
  r.slo_ratio = slo_ratio(r, b.slo);
  r.reason = meets ? "" : missed_text(r, b.slo);
  return r;
}

bool cheaper(const PlanServeRow& x, const PlanServeRow& y) {
  if (*x.usd_per_hour() != *y.usd_per_hour()) return *x.usd_per_hour() < *y.usd_per_hour();
  if (x.e2e_p99 != y.e2e_p99) return x.e2e_p99 < y.e2e_p99;
  return x.index < y.index;
}

ServeConfig at_rate(const ServeConfig& config, const CapacityServeAnswer& cap, double rate) {
  ServeConfig c = config;
  if (c.trace.kind == serving::TraceKind::kSynthetic) {
    c.trace.synthetic.arrivals.rate_per_s = rate;
  } else if (cap.trace_probe && cap.trace_probe->rate_per_s > 0.0) {
    c.trace.transforms.time_scale =
        config.trace.transforms.time_scale * rate / cap.trace_probe->rate_per_s;
  }
  return c;
}

// capacity serve's search on row `r`'s configuration, and compare serve's why at the capacity
// (at the first failing point when nothing meets).
PlanServeDetail detail_of(const Base& b, const PlanServeRow& row, const PlanServeRequest& q,
                          bool closed_loop) {
  PlanServeDetail d;
  PlanServeRow r = row;
  std::optional<ServeAnswer> prepared = prepare_row(b, r);
  if (!prepared) return d;
  CapacitySearch s;
  s.base = prepared->config;
  // Early stop with no bound of its own (the rate changes the requests of a timed workload):
  // the rule applies once the trace is done, and keeps each verdict exact.
  if (b.early_stop) s.base.setup.p99_stop = serving::P99Stop{b.slo, 0};
  s.ttft_p99 = b.slo.ttft;
  s.tpot_p99 = b.slo.tpot;
  s.e2e_p99 = b.slo.e2e;
  s.precision = q.precision;
  s.max_runs = q.max_runs;
  d.axis = closed_loop ? CapacityAxis::kMaxConcurrency : CapacityAxis::kRate;
  s.axis = d.axis;
  if (closed_loop) s.base.setup.clients.max_concurrency = 1;
  CapacityServeAnswer cap;
  try {
    cap = capacity_serve(s);
  } catch (const ConfigError& e) {
    d.note = "no capacity: " + first_problem(e);
    return d;
  }
  d.num_simulations = static_cast<std::int64_t>(cap.num_simulations());
  d.note = cap.note;
  ServeConfig why = prepared->config;  // replayed in full: no early stop
  if (closed_loop) {
    d.capacity_concurrency = cap.max_concurrency;
    d.bracket_low = static_cast<double>(cap.concurrency_low);
    d.bracket_high = static_cast<double>(cap.concurrency_high);
    const std::int64_t n = cap.max_concurrency > 0 ? cap.max_concurrency : 1;
    why.setup.clients.max_concurrency = static_cast<std::int32_t>(n);
  } else {
    d.capacity_requests_per_s = cap.max_rate_per_s;
    d.bracket_low = cap.bracket_low;
    d.bracket_high = cap.bracket_high;
    const double rate = cap.max_rate_per_s > 0.0 ? cap.max_rate_per_s : cap.bracket_high;
    if (rate > 0.0) why = at_rate(why, cap, rate);
  }
  ServeAnswer replay = prepare_serve(why);
  if (!replay.feasible) return d;
  d.why = detail::replay_why(replay, b.slo).why;
  // The objective the first failing point of the search misses, from its own runs.
  for (const CapacityRun& run : cap.runs) {
    const bool at_high = closed_loop
                             ? run.max_concurrency == cap.concurrency_high
                             : run.rate_per_s == cap.bracket_high;
    if (run.meets || !at_high || d.bracket_high <= 0.0) continue;
    PlanServeRow x;
    x.ttft_p99 = run.ttft_p99;
    x.tpot_p99 = run.tpot_p99;
    x.e2e_p99 = run.e2e_p99;
    x.num_finished = 1;
    d.why.missed_slo = missed_text(x, b.slo);
    break;
  }
  return d;
}

// Counts, the cheapest list, the Pareto front and the closest configuration.
void summarise(PlanServeAnswer& a, std::int64_t top) {
  std::vector<std::size_t> meet;
  PlanServeCounts& c = a.counts;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const PlanServeRow& r = a.rows[i];
    switch (r.status) {
      case ServePlanStatus::kMeets:
        ++c.num_meet;
        if (r.usd_per_hour()) meet.push_back(i); else ++c.num_meet_unpriced;
        break;
      case ServePlanStatus::kMisses:
        ++c.num_miss;
        if (r.stopped_early) ++c.num_stopped_early;
        break;
      case ServePlanStatus::kDoesNotFit: ++c.num_skipped_does_not_fit; break;
      case ServePlanStatus::kInvalid: ++c.num_skipped_invalid; break;
      case ServePlanStatus::kOverMaxGpus: ++c.num_skipped_max_gpus; break;
      case ServePlanStatus::kOverMaxHostMemory: ++c.num_skipped_max_host_memory; break;
    }
    if (r.status == ServePlanStatus::kMisses &&
        (!a.closest || r.slo_ratio < a.rows[*a.closest].slo_ratio)) {
      a.closest = i;
    }
  }
  c.num_configs = static_cast<std::int64_t>(a.rows.size());
  c.num_simulated = c.num_meet + c.num_miss;
  if (c.num_meet > 0) a.closest.reset();
  std::stable_sort(meet.begin(), meet.end(),
                   [&](std::size_t x, std::size_t y) { return cheaper(a.rows[x], a.rows[y]); });
  a.cheapest.assign(meet.begin(),
                    meet.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(meet.size()),
                                                            static_cast<std::ptrdiff_t>(top)));
  a.pareto = plan_serve_pareto(a.rows, meet);
}

}  // namespace

std::vector<std::size_t> plan_serve_pareto(const std::vector<PlanServeRow>& rows,
                                           const std::vector<std::size_t>& candidates) {
  std::vector<std::size_t> priced;
  for (const std::size_t i : candidates) {
    if (rows[i].usd_per_hour()) priced.push_back(i);
  }
  std::stable_sort(priced.begin(), priced.end(),
                   [&](std::size_t x, std::size_t y) { return cheaper(rows[x], rows[y]); });
  // By cost (ties: lower p99 E2E, then index first): a row joins the front when its p99 E2E is
  // below that of every cheaper-or-equal row already seen.
  std::vector<std::size_t> front;
  for (const std::size_t i : priced) {
    if (!front.empty() && rows[i].e2e_p99 >= rows[front.back()].e2e_p99) continue;
    front.push_back(i);
  }
  return front;
}

namespace {

struct Prepared {
  Base base;
  PlanServeSpace space;
  std::vector<PlanServeRow> rows;
  std::vector<std::size_t> to_run;
  std::map<std::string, GpuPrice> prices;
  std::string prices_source;
  std::string workload;
  bool closed_loop = false;
  bool default_slo = false;
  std::string fingerprint;
  std::string host_memory_bound;  // PlanServeAnswer::host_memory_bound
};

// --gpu-price GPU=USD entries over the price table, each for a GPU of the search.
void apply_price_overrides(const std::vector<std::string>& entries, Prepared& p) {
  ValidationReport report;
  std::vector<std::string> named;
  for (const std::string& e : entries) {
    const std::size_t eq = e.find('=');
    const std::string id = plan_serve_gpu_id(eq == std::string::npos ? "" : e.substr(0, eq));
    const auto gpu = std::find_if(p.space.gpus.begin(), p.space.gpus.end(),
                                  [&](const std::string& g) { return g == id; });
    double usd = 0.0;
    std::size_t used = 0;
    try {
      if (eq != std::string::npos) usd = std::stod(e.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || id.empty()) {
      report.error("plan.gpu_price",
                   fmt::format("'{}' is not GPU=USD (a searched GPU id, then its price in US "
                               "dollars per GPU-hour), e.g. h100-sxm=2.49",
                               e));
    } else if (gpu == p.space.gpus.end()) {
      report.error("plan.gpu_price", fmt::format("'{}' is not among the searched GPUs ({})",
                                                 e.substr(0, eq), fmt::join(p.space.gpus, ", ")));
    } else if (used == 0 || used != e.size() - eq - 1 || !std::isfinite(usd) || usd <= 0.0) {
      report.error("plan.gpu_price",
                   fmt::format("the price of {} must be a positive number of US dollars per "
                               "GPU-hour, got '{}'",
                               *gpu, e.substr(eq + 1)));
    } else if (std::find(named.begin(), named.end(), *gpu) != named.end()) {
      report.error("plan.gpu_price", fmt::format("{} is priced twice", *gpu));
    } else {
      named.push_back(*gpu);
      p.prices[*gpu] = GpuPrice{usd, "--gpu-price"};
    }
  }
  throw_if_errors(report);
  if (!named.empty()) {
    p.prices_source += fmt::format(", with --gpu-price for {}", fmt::join(named, ", "));
  }
}

Prepared prepare(const PlanServeRequest& q) {
  ValidationReport report;
  if (q.top < 1 || q.top > 1000) {
    report.error("plan.top", fmt::format("must be in [1, 1000], got {}", q.top));
  }
  if (q.max_gpus && (*q.max_gpus < 1 || *q.max_gpus > 65536)) {
    report.error("plan.max_gpus", fmt::format("must be in [1, 65536], got {}", *q.max_gpus));
  }
  if (q.jobs < 0) report.error("plan.jobs", fmt::format("must be >= 0, got {}", q.jobs));
  if (!(q.precision > 0.0 && q.precision < 1.0)) {
    report.error("plan.precision", fmt::format("must be in (0, 1), got {}", q.precision));
  }
  if (q.max_runs < 2) report.error("plan.max_runs", "must be >= 2");
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
  p.base.options = q.options;
  p.base.early_stop = q.early_stop;
  p.base.slo.ttft = q.options.slo_ttft;
  p.base.slo.tpot = q.options.slo_tpot;
  p.base.slo.e2e = q.options.slo_e2e;
  if (!p.base.slo.any()) {
    p.base.slo = default_serving_slo();
    p.default_slo = true;
  }
  // The base as given must be a serving configuration (its own problems at their flags); its
  // workload is every configuration's, counted once for the early stop's bound. The searched
  // tiers are checked by plan_serve_space and each row's by its budget: with a tier list the
  // base is checked without its disk tier (serve refuses disk bandwidths without a disk size,
  // and a disk size without a host size; the bandwidths' units were checked when set).
  ServeOptions checked = q.options;
  if (!q.kv_offloading_sizes.empty() || !q.kv_offloading_disk_sizes.empty()) {
    checked.kv_offloading_disk_size = Bytes(0);
    checked.kv_offloading_disk_read_bandwidth.clear();
    checked.kv_offloading_disk_write_bandwidth.clear();
  }
  const ServeConfig config = serve_config(checked);
  if (config.disaggregated) {
    // The layouts are the search's own (PlanServeSpace::layouts): a disaggregated base is
    // refused, not searched as if it were aggregated.
    throw ConfigError(located(q.options, [] {
      ValidationReport r;
      r.error("serving.prefill_instances",
              "plan serve searches the layouts itself: give --search-disaggregated to rank the "
              "xPyD splits of each --search-replicas count beside the aggregated replicas, or "
              "run `vramsim serve --prefill-instances X --decode-instances Y` for one layout");
      return r;
    }()));
  }
  p.closed_loop = config.setup.clients.send_all_at_start;
  {
    std::unique_ptr<serving::TraceSource> trace = serving::open_trace(config.trace);
    p.workload = trace->describe();
    std::int64_t n = 0;
    while (trace->next()) ++n;
    p.base.num_requests_bound = n;
  }
  p.space = plan_serve_space(q);
  if (!q.max_host_memory.empty()) p.base.max_host_memory = parse_bytes(q.max_host_memory);
  p.base.node_host_memory = !p.base.max_host_memory;
  if (p.space.has_kv_tiers()) {
    p.host_memory_bound = host_memory_bound_text(p.base.max_host_memory, *p.base.link_topologies,
                                                 p.base.options.topology, p.space);
  }
  const std::filesystem::path prices = q.prices_file.empty()
                                           ? checked_project_root() / "topologies" / "prices.toml"
                                           : q.prices_file;
  if (std::filesystem::exists(prices)) {
    try {
      p.prices = load_gpu_prices(prices);
    } catch (const ConfigError& e) {
      throw ConfigError("plan.gpu_prices", first_problem(e));
    }
  } else if (!q.prices_file.empty()) {
    throw ConfigError("plan.gpu_prices", fmt::format("no such file: {}", prices.string()));
  }
  p.prices_source = prices.string();
  apply_price_overrides(q.gpu_price, p);
  const std::size_t n = p.space.size();
  p.rows.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    PlanServeRow& r = p.rows[i];
    r = plan_serve_row(p.space, i);
    if (q.max_gpus && r.num_gpus() > *q.max_gpus) {
      r.status = ServePlanStatus::kOverMaxGpus;
      if (r.mixed()) {
        r.reason = fmt::format("{} GPUs ({} x prefill TP {} + {} x decode TP {}) > --max-gpus {}",
                               r.num_gpus(), r.prefill_instances, r.prefill_tp,
                               r.decode_instances, r.tp, *q.max_gpus);
        continue;
      }
      r.reason = fmt::format("{} GPUs (TP {} x PP {} x {}) > --max-gpus {}", r.num_gpus(), r.tp,
                             r.pp,
                             r.prefill_instances > 0
                                 ? fmt::format("{}P{}D", r.prefill_instances, r.decode_instances)
                                 : fmt::format("{} replicas", r.replicas),
                             *q.max_gpus);
      continue;
    }
    p.to_run.push_back(i);
  }
  p.fingerprint = plan_serve_fingerprint(
      q.options, p.base.slo, q.early_stop,
      node_host_memory_inputs(*p.base.link_topologies, p.base.options.topology, p.space));
  return p;
}

void attach_prices(PlanServeAnswer& a, const std::map<std::string, GpuPrice>& prices) {
  for (PlanServeRow& r : a.rows) {
    const auto it = prices.find(r.gpu);
    if (it != prices.end()) r.usd_per_gpu_hour = it->second.usd_per_gpu_hour;
    if (!r.mixed()) continue;
    const auto pre = prices.find(r.prefill_gpu);
    if (pre != prices.end()) r.prefill_usd_per_gpu_hour = pre->second.usd_per_gpu_hour;
  }
}

// Details of the reported rows, `threads` at once; each is independent of the others.
void fill_details(PlanServeAnswer& a, const Base& b, const PlanServeRequest& q, int threads) {
  std::set<std::size_t> which(a.cheapest.begin(), a.cheapest.end());
  which.insert(a.pareto.begin(), a.pareto.end());
  if (a.closest) which.insert(*a.closest);
  const std::vector<std::size_t> list(which.begin(), which.end());
  std::vector<PlanServeDetail> out(list.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t k = next++; k < list.size(); k = next++) {
      out[k] = detail_of(b, a.rows[list[k]], q, a.closed_loop);
    }
  };
  std::vector<std::thread> pool;
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(list.size())));
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (std::size_t k = 0; k < list.size(); ++k) a.details[list[k]] = std::move(out[k]);
}

}  // namespace

PlanServeAnswer plan_serve(const PlanServeRequest& q, const PlanServeCallbacks& cb) {
  const SweepWorld world;
  Prepared p;
  try {
    p = prepare(q);
  } catch (const ConfigError&) {
    if (world.is_root()) throw;
    PlanServeAnswer other;
    other.root = false;
    return other;
  }
  std::vector<std::size_t> resumed;
  if (world.is_root() && q.resume) {
    for (const PointRecord& rec : previous_records(q.out, cb.warning)) {
      if (rec.index < 0 || static_cast<std::size_t>(rec.index) >= p.rows.size()) continue;
      PlanServeRow& row = p.rows[static_cast<std::size_t>(rec.index)];
      if (row.status == ServePlanStatus::kOverMaxGpus) continue;
      if (!serve_plan_row_from_record(rec, p.fingerprint, row)) continue;
      resumed.push_back(static_cast<std::size_t>(rec.index));
    }
  }
  SpreadWork w;
  w.candidates = p.to_run;
  w.done = world.broadcast_indices(resumed);
  w.threads = search_threads(q.jobs, world);
  const int threads = w.threads;
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
    return serve_plan_row_record(evaluate_row(cp.base, cp.rows[i]), cp.fingerprint);
  };
  if (!world.is_root()) {
    spread_points(world, w);
    world.broadcast("");
    PlanServeAnswer other;
    other.root = false;
    return other;
  }
  w.take = [&](const PointRecord& rec) {
    if (journal) journal->append(rec);
    PlanServeRow& row = p.rows.at(static_cast<std::size_t>(rec.index));
    VRAMSIM_CHECK(serve_plan_row_from_record(rec, p.fingerprint, row),
                  "a malformed plan serve record");
  };
  w.progress = cb.progress;
  spread_points(world, w);
  world.broadcast("");
  PlanServeAnswer a;
  a.model = p.base.options.model;
  a.workload = p.workload;
  a.closed_loop = p.closed_loop;
  a.slo = p.base.slo;
  a.default_slo = p.default_slo;
  a.prices_source = p.prices_source;
  a.host_memory_bound = p.host_memory_bound;
  a.space = std::move(p.space);
  a.rows = std::move(p.rows);
  a.counts.num_resumed = static_cast<std::int64_t>(resumed.size());
  attach_prices(a, p.prices);
  summarise(a, q.top);
  if (q.capacity) fill_details(a, p.base, q, threads);
  if (writer) {
    write_plan_serve_results(*writer, a, q);
    journal->remove();
  }
  return a;
}

}  // namespace vramsim::run
