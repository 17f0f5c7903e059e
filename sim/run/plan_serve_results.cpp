#include "sim/run/plan_serve_results.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/io/results_file.hpp"

namespace vramsim::run {

namespace {

std::string record_text(const PlanServeRow& row, const std::string& fingerprint) {
  return fmt::format("vramsim plan serve {}\n{}\n", fingerprint, row.flags());
}

double nan_if_unset(const std::optional<double>& v) {
  return v ? *v : std::numeric_limits<double>::quiet_NaN();
}

// The usd_per_gpu_hour column: the row's GPU's price; for a mixed layout (two GPU types) the
// mean over its GPUs, usd_per_hour / num_gpus, so that num_gpus x it is still usd_per_hour.
std::optional<double> per_gpu_hour(const PlanServeRow& r) {
  if (!r.mixed()) return r.usd_per_gpu_hour;
  const std::optional<double> h = r.usd_per_hour();
  if (!h) return std::nullopt;
  return *h / static_cast<double>(r.num_gpus());
}

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

nlohmann::ordered_json slo_json(const serving::SloSpec& slo) {
  nlohmann::ordered_json j;
  const auto put = [&](const char* name, const std::optional<Duration>& d) {
    j[name] = d ? nlohmann::ordered_json(d->seconds()) : nlohmann::ordered_json();
  };
  put("ttft_p99_s", slo.ttft);
  put("tpot_p99_s", slo.tpot);
  put("e2e_p99_s", slo.e2e);
  return j;
}

nlohmann::ordered_json space_json(const PlanServeSpace& s) {
  nlohmann::ordered_json j;
  j["gpus"] = s.gpus;
  j["tp"] = s.tps;
  j["pp"] = s.pps;
  j["replicas"] = s.replicas;
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const PlanServeLayout& l : s.layouts) {
    layouts.push_back(l.disaggregated() ? fmt::format("{}P{}D", l.prefill, l.decode)
                                        : fmt::format("{} replicas", l.replicas));
  }
  j["layouts"] = layouts;
  if (s.mixed_pools()) {
    nlohmann::ordered_json mixed = nlohmann::ordered_json::array();
    for (const PlanServeMixedLayout& m : s.mixed_layouts) {
      mixed.push_back(fmt::format("{}P{}D prefill {} TP {}, decode {} TP {}", m.prefill,
                                  m.decode, m.prefill_pool.gpu, m.prefill_pool.tp,
                                  m.decode_pool.gpu, m.decode_pool.tp));
    }
    j["mixed_layouts"] = mixed;
  }
  j["quantizations"] = s.quantizations;
  j["kv_cache_dtypes"] = s.kv_cache_dtypes;
  j["max_num_seqs"] = s.max_num_seqs;
  j["max_num_batched_tokens"] = s.max_num_batched_tokens;
  if (s.has_kv_tiers()) {
    nlohmann::ordered_json tiers = nlohmann::ordered_json::array();
    for (const PlanServeKvTier& t : s.kv_tiers) {
      nlohmann::ordered_json x;
      x["kv_offloading_size_bytes"] = t.host.count();
      x["kv_offloading_disk_size_bytes"] = t.disk.count();
      tiers.push_back(x);
    }
    j["kv_tiers"] = tiers;
  }
  return j;
}

io::TypedRecord detail_typed(const PlanServeDetail& d) {
  const bool clients = d.axis == CapacityAxis::kMaxConcurrency;
  io::TypedRecord t;
  t.add("capacity_axis", std::string(to_string(d.axis)))
      .add("capacity_requests_per_s", io::PerSecond{d.capacity_requests_per_s})
      .add("capacity_concurrency", d.capacity_concurrency)
      .add("capacity_low_requests_per_s", io::PerSecond{clients ? 0.0 : d.bracket_low})
      .add("capacity_high_requests_per_s", io::PerSecond{clients ? 0.0 : d.bracket_high})
      .add("capacity_low_concurrency", static_cast<std::int64_t>(clients ? d.bracket_low : 0))
      .add("capacity_high_concurrency", static_cast<std::int64_t>(clients ? d.bracket_high : 0))
      .add("capacity_num_simulations", d.num_simulations)
      .add("capacity_note", d.note)
      .add("bottleneck", d.why.kind)
      .add("bottleneck_detail", d.why.detail)
      .add("missed_slo", d.why.missed_slo);
  return t;
}

nlohmann::ordered_json listed_json(const PlanServeAnswer& a, std::size_t i) {
  const bool pools = a.space.mixed_pools();
  nlohmann::ordered_json j =
      serve_plan_row_typed(a.rows[i], pools, a.space.has_kv_tiers()).to_json();
  const PlanServeRow& r = a.rows[i];
  // Unpriced: null, never 0 (NaN in the results file).
  j["usd_per_gpu_hour"] = optional_json(per_gpu_hour(r));
  if (pools) {
    const bool dis = r.prefill_instances > 0;
    std::optional<double> prefill, decode;
    if (dis) decode = r.usd_per_gpu_hour;
    prefill = r.mixed() ? r.prefill_usd_per_gpu_hour : decode;
    j["prefill_usd_per_gpu_hour"] = optional_json(prefill);
    j["decode_usd_per_gpu_hour"] = optional_json(decode);
  }
  j["usd_per_hour"] = optional_json(r.usd_per_hour());
  j["usd_per_million_slo_output_tokens"] = optional_json(r.usd_per_million_slo_output_tokens());
  if (const auto it = a.details.find(i); it != a.details.end()) {
    const nlohmann::ordered_json detail = detail_typed(it->second).to_json();
    for (const auto& [k, v] : detail.items()) j[k] = v;
  }
  return j;
}

std::string capacity_text(const PlanServeDetail& d) {
  if (d.axis == CapacityAxis::kMaxConcurrency) {
    return d.capacity_concurrency > 0 ? fmt::format("{} clients", d.capacity_concurrency)
                                      : "no client count";
  }
  return d.capacity_requests_per_s > 0.0
             ? fmt::format("{:.3g} requests/s", d.capacity_requests_per_s)
             : "no rate";
}

}  // namespace

std::string plan_serve_fingerprint(const ServeOptions& o, const serving::SloSpec& slo,
                                   bool early_stop, std::string_view node_inputs) {
  return inputs_fingerprint(resolved_inputs_json(o),
                            "slo=" + slo_json(slo).dump() +
                                fmt::format("\nearly_stop={}\n{}", early_stop, node_inputs));
}

PointRecord serve_plan_row_record(const PlanServeRow& row, const std::string& fingerprint) {
  PointRecord rec;
  rec.index = row.index;
  rec.status = std::string(row.status == ServePlanStatus::kMeets ? kStatusOk : kStatusInfeasible);
  rec.reason = row.reason;
  rec.scenario_text = record_text(row, fingerprint);
  nlohmann::ordered_json j;
  j["status"] = to_string(row.status);
  j["engine_max_num_seqs"] = row.engine_max_num_seqs;
  j["engine_max_num_batched_tokens"] = row.engine_max_num_batched_tokens;
  j["num_gpu_blocks"] = row.num_gpu_blocks;
  j["stopped_early"] = row.stopped_early;
  j["stopped_on"] = row.stopped_on;
  j["num_finished"] = row.num_finished;
  j["num_good"] = row.num_good;
  j["ttft_p99_ns"] = row.ttft_p99.nanoseconds();
  j["tpot_p99_ns"] = row.tpot_p99.nanoseconds();
  j["e2e_p99_ns"] = row.e2e_p99.nanoseconds();
  j["simulated_s"] = row.simulated_s;
  j["output_tokens_per_s"] = row.output_tokens_per_s;
  j["goodput_requests_per_s"] = row.goodput_requests_per_s;
  j["slo_output_tokens_per_s"] = row.slo_output_tokens_per_s;
  j["slo_ratio"] = row.slo_ratio;
  {
    // The KV tiers' columns (PlanServeSpace::has_kv_tiers); a row without a tier has its GPU
    // hit rate too, to stand beside the rows with one.
    j["host_memory_bytes"] = row.host_memory_bytes.count();
    j["disk_bytes"] = row.disk_bytes.count();
    j["gpu_prefix_hit_rate"] = row.gpu_prefix_hit_rate;
    j["cpu_prefix_hit_rate"] = row.cpu_prefix_hit_rate;
    j["disk_prefix_hit_rate"] = row.disk_prefix_hit_rate;
  }
  rec.result = std::move(j);
  return rec;
}

bool serve_plan_row_from_record(const PointRecord& rec, const std::string& fingerprint,
                                PlanServeRow& row) {
  if (rec.index != row.index || rec.scenario_text != record_text(row, fingerprint)) return false;
  const nlohmann::ordered_json& j = rec.result;
  const ResultShape shape{
      {"engine_max_num_seqs", "engine_max_num_batched_tokens", "num_gpu_blocks", "num_finished",
       "num_good", "ttft_p99_ns", "tpot_p99_ns", "e2e_p99_ns"},
      {"simulated_s", "output_tokens_per_s", "goodput_requests_per_s", "slo_output_tokens_per_s",
       "slo_ratio"},
      {"status", "stopped_on"},
      {"stopped_early"}};
  if (!has_shape(j, shape)) return false;
  const std::optional<ServePlanStatus> status =
      serve_plan_status_from_string(j["status"].get<std::string>());
  if (!status || *status == ServePlanStatus::kOverMaxGpus) return false;
  if ((*status == ServePlanStatus::kMeets) != (rec.status == kStatusOk)) return false;
  PlanServeRow r = row;
  r.status = *status;
  r.reason = rec.reason;
  r.engine_max_num_seqs = j["engine_max_num_seqs"].get<std::int64_t>();
  r.engine_max_num_batched_tokens = j["engine_max_num_batched_tokens"].get<std::int64_t>();
  r.num_gpu_blocks = j["num_gpu_blocks"].get<std::int64_t>();
  r.stopped_early = j["stopped_early"].get<bool>();
  r.stopped_on = j["stopped_on"].get<std::string>();
  r.num_finished = j["num_finished"].get<std::int64_t>();
  r.num_good = j["num_good"].get<std::int64_t>();
  r.ttft_p99 = Duration::from_nanoseconds(j["ttft_p99_ns"].get<std::int64_t>());
  r.tpot_p99 = Duration::from_nanoseconds(j["tpot_p99_ns"].get<std::int64_t>());
  r.e2e_p99 = Duration::from_nanoseconds(j["e2e_p99_ns"].get<std::int64_t>());
  r.simulated_s = j["simulated_s"].get<double>();
  r.output_tokens_per_s = j["output_tokens_per_s"].get<double>();
  r.goodput_requests_per_s = j["goodput_requests_per_s"].get<double>();
  r.slo_output_tokens_per_s = j["slo_output_tokens_per_s"].get<double>();
  r.slo_ratio = j["slo_ratio"].get<double>();
  const ResultShape tier{{"host_memory_bytes", "disk_bytes"},
                         {"gpu_prefix_hit_rate", "cpu_prefix_hit_rate", "disk_prefix_hit_rate"},
                         {},
                         {}};
  if (has_shape(j, tier)) {  // absent from a journal written before the KV tier columns
    r.host_memory_bytes = Bytes(j["host_memory_bytes"].get<std::int64_t>());
    r.disk_bytes = Bytes(j["disk_bytes"].get<std::int64_t>());
    r.gpu_prefix_hit_rate = j["gpu_prefix_hit_rate"].get<double>();
    r.cpu_prefix_hit_rate = j["cpu_prefix_hit_rate"].get<double>();
    r.disk_prefix_hit_rate = j["disk_prefix_hit_rate"].get<double>();
  }
  row = std::move(r);
  return true;
}

io::TypedRecord serve_plan_row_typed(const PlanServeRow& r, bool pools, bool tiers) {
  io::TypedRecord t;
  t.add("config_index", r.index)
      .add("gpu", r.gpu)
      .add("tp", r.tp)
      .add("pp", r.pp)
      .add("replicas", r.replicas)
      .add("prefill_instances", r.prefill_instances)
      .add("decode_instances", r.decode_instances)
      .add("num_gpus", r.num_gpus());
  if (pools) {
    // Each pool's GPU type and count: the GPUs per type a mixed layout is priced by.
    const bool dis = r.prefill_instances > 0;
    const double prefill_price = nan_if_unset(r.mixed() ? r.prefill_usd_per_gpu_hour
                                              : dis     ? r.usd_per_gpu_hour
                                                        : std::optional<double>());
    const double decode_price = nan_if_unset(dis ? r.usd_per_gpu_hour : std::optional<double>());
    t.add("prefill_gpu", dis ? (r.mixed() ? r.prefill_gpu : r.gpu) : std::string())
        .add("prefill_tp", dis ? (r.mixed() ? r.prefill_tp : r.tp) : std::int64_t{0})
        .add("prefill_num_gpus", r.prefill_gpus())
        .add("prefill_usd_per_gpu_hour", io::Usd{prefill_price})
        .add("decode_gpu", dis ? r.gpu : std::string())
        .add("decode_tp", dis ? r.tp : std::int64_t{0})
        .add("decode_num_gpus", dis ? r.decode_gpus() : std::int64_t{0})
        .add("decode_usd_per_gpu_hour", io::Usd{decode_price});
  }
  t.add("quantization", r.quantization)
      .add("kv_cache_dtype", r.kv_cache_dtype)
      .add("max_num_seqs", r.engine_max_num_seqs)
      .add("max_num_batched_tokens", r.engine_max_num_batched_tokens);
  if (tiers) {
    t.add("kv_offloading_size_bytes", r.kv_tier.host)
        .add("kv_offloading_disk_size_bytes", r.kv_tier.disk)
        .add("host_memory_bytes", r.host_memory_bytes)
        .add("disk_bytes", r.disk_bytes)
        .add("gpu_prefix_hit_rate", io::Ratio{r.gpu_prefix_hit_rate})
        .add("cpu_prefix_hit_rate", io::Ratio{r.cpu_prefix_hit_rate})
        .add("disk_prefix_hit_rate", io::Ratio{r.disk_prefix_hit_rate});
  }
  t.add("status", std::string(to_string(r.status)))
      .add("meets_slo", r.status == ServePlanStatus::kMeets)
      .add("num_gpu_blocks", r.num_gpu_blocks)
      .add("stopped_early", r.stopped_early)
      .add("stopped_on", r.stopped_on)
      .add("num_finished", r.num_finished)
      .add("num_good", r.num_good)
      .add("ttft_p99_s", r.ttft_p99)
      .add("tpot_p99_s", r.tpot_p99)
      .add("e2e_p99_s", r.e2e_p99)
      .add("simulated_s", io::Seconds{r.simulated_s})
      .add("throughput_output_tokens_per_s", io::PerSecond{r.output_tokens_per_s})
      .add("goodput_requests_per_s", io::PerSecond{r.goodput_requests_per_s})
      .add("slo_output_tokens_per_s", io::PerSecond{r.slo_output_tokens_per_s})
      .add("slo_ratio", io::Ratio{r.slo_ratio})
      .add("usd_per_gpu_hour", io::Usd{nan_if_unset(per_gpu_hour(r))})
      .add("usd_per_hour", io::Usd{nan_if_unset(r.usd_per_hour())})
      .add("usd_per_million_slo_output_tokens",
           io::Usd{nan_if_unset(r.usd_per_million_slo_output_tokens())})
      .add("flags", r.flags())
      .add("reason", r.reason);
  return t;
}

std::string plan_serve_message(const PlanServeAnswer& a) {
  const PlanServeCounts& c = a.counts;
  if (!a.cheapest.empty()) {
    const PlanServeRow& best = a.rows[a.cheapest.front()];
    std::string s = fmt::format(
        "cheapest deployment meeting the SLOs: {} ({} GPUs, ${:.2f}/h, ${:.3f} per million "
        "SLO-meeting output tokens; p99 TTFT {:.3f} s, TPOT {:.4f} s, E2E {:.3f} s)",
        best.flags(), best.num_gpus(), *best.usd_per_hour(),
        best.usd_per_million_slo_output_tokens().value_or(0.0), best.ttft_p99.seconds(),
        best.tpot_p99.seconds(), best.e2e_p99.seconds());
    if (const auto it = a.details.find(a.cheapest.front()); it != a.details.end()) {
      s += fmt::format("; capacity {}, bound by {}", capacity_text(it->second),
                       it->second.why.kind.empty() ? "?" : it->second.why.kind);
    }
    s += fmt::format("; {} of {} simulated configurations meet the SLOs", c.num_meet,
                     c.num_simulated);
    if (c.num_meet_unpriced > 0) {
      s += fmt::format(" ({} of them on GPUs without a price, not ranked)", c.num_meet_unpriced);
    }
    return s;
  }
  if (c.num_meet > 0) {
    return fmt::format("{} configurations meet the SLOs, all on GPUs without a price in {}: add "
                       "their prices to rank them",
                       c.num_meet, a.prices_source);
  }
  if (a.closest) {
    const PlanServeRow& r = a.rows[*a.closest];
    std::string s = fmt::format(
        "no configuration meets the SLOs ({} simulated); the closest, {} ({} GPUs), misses "
        "with {} (worst p99 {:.2f}x its target)",
        c.num_simulated, r.flags(), r.num_gpus(), r.reason, r.slo_ratio);
    if (const auto it = a.details.find(*a.closest); it != a.details.end()) {
      s += fmt::format("; bound by {}: {}", it->second.why.kind, it->second.why.detail);
    }
    return s;
  }
  std::string host;
  if (c.num_skipped_max_host_memory > 0) {
    host = fmt::format(", {} above the host memory bound ({})", c.num_skipped_max_host_memory,
                       a.host_memory_bound);
  }
  return fmt::format("no configuration of the {} could be simulated: every one was skipped "
                     "({} do not fit, {} not valid, {} above --max-gpus{})",
                     c.num_configs, c.num_skipped_does_not_fit, c.num_skipped_invalid,
                     c.num_skipped_max_gpus, host);
}

nlohmann::ordered_json plan_serve_json(const PlanServeAnswer& a) {
  nlohmann::ordered_json j;
  j["model"] = a.model;
  j["workload"] = a.workload;
  j["closed_loop"] = a.closed_loop;
  j["slo"] = slo_json(a.slo);
  j["default_slo"] = a.default_slo;
  j["pareto_latency"] = "e2e_p99_s";
  j["prices"] = a.prices_source;
  j["search"] = space_json(a.space);
  const PlanServeCounts& c = a.counts;
  j["num_configs"] = c.num_configs;
  j["num_simulated"] = c.num_simulated;
  j["num_meet"] = c.num_meet;
  j["num_miss"] = c.num_miss;
  j["num_stopped_early"] = c.num_stopped_early;
  j["num_skipped"] = c.num_skipped_does_not_fit + c.num_skipped_invalid +
                     c.num_skipped_max_gpus + c.num_skipped_max_host_memory;
  j["num_skipped_does_not_fit"] = c.num_skipped_does_not_fit;
  j["num_skipped_invalid"] = c.num_skipped_invalid;
  j["num_skipped_max_gpus"] = c.num_skipped_max_gpus;
  if (a.space.has_kv_tiers()) {
    j["num_skipped_max_host_memory"] = c.num_skipped_max_host_memory;
    j["host_memory_bound"] = a.host_memory_bound;
  }
  j["num_meet_unpriced"] = c.num_meet_unpriced;
  j["num_resumed"] = c.num_resumed;
  j["meets_slo"] = c.num_meet > 0;
  j["message"] = plan_serve_message(a);
  j["cheapest"] = nlohmann::ordered_json::array();
  for (const std::size_t i : a.cheapest) j["cheapest"].push_back(listed_json(a, i));
  j["pareto"] = nlohmann::ordered_json::array();
  for (const std::size_t i : a.pareto) j["pareto"].push_back(listed_json(a, i));
  j["closest"] = a.closest ? listed_json(a, *a.closest) : nlohmann::ordered_json();
  return j;
}

void write_plan_serve_results(io::ResultsWriter& w, const PlanServeAnswer& a,
                              const PlanServeRequest& q) {
  nlohmann::ordered_json inputs;
  inputs["model"] = a.model;
  inputs["workload"] = a.workload;
  inputs["slo"] = slo_json(a.slo);
  inputs["search"] = space_json(a.space);
  inputs["settings"] = resolved_inputs_json(q.options);
  w.write_run_metadata({.vramsim_version = "",
                        .command = q.command_line,
                        .scenario_text = q.options.scenario_text,
                        .seed = q.options.seed,
                        .inputs = inputs.dump(),
                        .calibration_source = q.options.calibration.empty()
                                                  ? "roofline (datasheet)"
                                                  : q.options.calibration,
                        .created_by = "vramsim plan serve"});
  const std::string_view group = "/plan_serve";
  w.create_group(group);
  w.set_string_attribute(group, "model", a.model);
  w.set_string_attribute(group, "workload", a.workload);
  w.set_string_attribute(group, "prices", a.prices_source);
  w.set_string_attribute(group, "pareto_latency", "e2e_p99_s");
  const auto slo = [&](const char* name, const std::optional<Duration>& d) {
    w.set_double_attribute(group, name,
                           d ? d->seconds() : std::numeric_limits<double>::quiet_NaN());
  };
  slo("slo_ttft_p99_s", a.slo.ttft);
  slo("slo_tpot_p99_s", a.slo.tpot);
  slo("slo_e2e_p99_s", a.slo.e2e);
  const PlanServeCounts& c = a.counts;
  w.set_int_attribute(group, "num_configs", c.num_configs);
  w.set_int_attribute(group, "num_simulated", c.num_simulated);
  w.set_int_attribute(group, "num_meet", c.num_meet);
  w.set_int_attribute(group, "num_miss", c.num_miss);
  w.set_int_attribute(group, "num_stopped_early", c.num_stopped_early);
  w.set_int_attribute(group, "num_skipped_does_not_fit", c.num_skipped_does_not_fit);
  w.set_int_attribute(group, "num_skipped_invalid", c.num_skipped_invalid);
  w.set_int_attribute(group, "num_skipped_max_gpus", c.num_skipped_max_gpus);
  if (a.space.has_kv_tiers()) {
    w.set_int_attribute(group, "num_skipped_max_host_memory", c.num_skipped_max_host_memory);
    w.set_string_attribute(group, "host_memory_bound", a.host_memory_bound);
  }
  w.set_string_attribute(group, "message", plan_serve_message(a));
  std::vector<std::int64_t> rank(a.rows.size(), 0);
  for (std::size_t k = 0; k < a.cheapest.size(); ++k) {
    rank[a.cheapest[k]] = static_cast<std::int64_t>(k + 1);
  }
  std::vector<bool> pareto(a.rows.size(), false);
  for (const std::size_t i : a.pareto) pareto[i] = true;
  std::vector<io::TypedRecord> rows;
  rows.reserve(a.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    io::TypedRecord t =
        serve_plan_row_typed(a.rows[i], a.space.mixed_pools(), a.space.has_kv_tiers());
    t.add("cheapest_rank", rank[i]).add("pareto", static_cast<bool>(pareto[i]));
    rows.push_back(std::move(t));
  }
  io::TypedRecord::write_rows(w, "/plan_serve/configs", rows);
  if (!a.details.empty()) {
    std::vector<io::TypedRecord> reported;
    for (const auto& [i, d] : a.details) {
      io::TypedRecord t;
      t.add("config_index", a.rows[i].index);
      const io::TypedRecord dt = detail_typed(d);
      for (const io::TypedRecord::Field& f : dt.fields()) t.copy(dt, f.name);
      reported.push_back(std::move(t));
    }
    io::TypedRecord::write_rows(w, "/plan_serve/reported", reported);
  }
  w.finish();
}

}  // namespace vramsim::run
