#include "sim/cli/plan_serve_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "sim/run/plan_serve_results.hpp"

namespace vramsim::cli {

namespace {

std::string money(const std::optional<double>& usd, const char* format) {
  return usd ? fmt::format(fmt::runtime(format), *usd) : std::string("unpriced");
}

// A mixed layout's GPU and TP: the prefill pool's, then the decode pool's ("h200/h100-sxm",
// "2/1"); one pool type: the row's.
std::string gpu_text(const run::PlanServeRow& r) {
  return r.mixed() ? r.prefill_gpu + "/" + r.gpu : r.gpu;
}
std::string tp_text(const run::PlanServeRow& r) {
  return r.mixed() ? fmt::format("{}/{}", r.prefill_tp, r.tp) : fmt::format("{}", r.tp);
}

std::string configs_table(const run::PlanServeAnswer& a, const std::vector<std::size_t>& which) {
  // The GPU and TP columns widen for a mixed layout's two pools (the widths of a search
  // without them otherwise).
  std::size_t gpu_width = 14, tp_width = 3;
  bool mixed = false;
  for (const std::size_t i : which) {
    gpu_width = std::max(gpu_width, gpu_text(a.rows[i]).size() + 1);
    tp_width = std::max(tp_width, tp_text(a.rows[i]).size() + 1);
    mixed = mixed || a.rows[i].mixed();
  }
  std::string out = fmt::format("{:>5}  {:<{}}{:>{}}{:>3}{:>5}{:>5}  {:<7}{:<6}{:>6}{:>7}{:>10}"
                                "{:>10}{:>9}{:>9}{:>10}\n",
                                "#", "gpu", gpu_width, "TP", tp_width, "PP", "rep", "GPUs",
                                "quant", "kv", "seqs", "tokens", "$/h", "$/M tok", "TTFT99",
                                "TPOT99", "E2E99");
  for (const std::size_t i : which) {
    const run::PlanServeRow& r = a.rows[i];
    out += fmt::format("{:>5}  {:<{}}{:>{}}{:>3}{:>5}{:>5}  {:<7}{:<6}{:>6}{:>7}{:>10}{:>10}"
                       "{:>9.3f}{:>9.4f}{:>10.3f}\n",
                       r.index, gpu_text(r), gpu_width, tp_text(r), tp_width, r.pp,
                       r.prefill_instances > 0
                           ? fmt::format("{}P{}D", r.prefill_instances, r.decode_instances)
                           : fmt::format("{}", r.replicas),
                       r.num_gpus(), r.quantization,
                       r.kv_cache_dtype, r.engine_max_num_seqs, r.engine_max_num_batched_tokens,
                       money(r.usd_per_hour(), "{:.2f}"),
                       money(r.usd_per_million_slo_output_tokens(), "{:.3f}"),
                       r.ttft_p99.seconds(), r.tpot_p99.seconds(), r.e2e_p99.seconds());
  }
  if (mixed) {
    // seqs and tokens are the decode pool's limits.
    out += "  gpu and TP of a mixed layout: prefill pool/decode pool (seqs, tokens: the decode "
           "pool's); GPUs per type:";
    const char* sep = " ";
    for (const std::size_t i : which) {
      const run::PlanServeRow& r = a.rows[i];
      if (!r.mixed()) continue;
      out += r.prefill_gpu == r.gpu
                 ? fmt::format("{}#{}: {} {}", sep, r.index, r.num_gpus(), r.gpu)
                 : fmt::format("{}#{}: {} {} + {} {}", sep, r.index, r.prefill_gpus(),
                               r.prefill_gpu, r.decode_gpus(), r.gpu);
      sep = "; ";
    }
    out += "\n";
  }
  // The KV offload tier of each row, when the search has tiers: its memory and where the
  // prefix hits came from.
  if (a.space.has_kv_tiers()) {
    for (const std::size_t i : which) {
      const run::PlanServeRow& r = a.rows[i];
      out += fmt::format("  #{}: KV tier {}", r.index, r.kv_tier_text());
      if (r.kv_tier.host > Bytes(0)) {
        out += fmt::format(" (host memory {}", format_bytes(r.host_memory_bytes));
        if (r.kv_tier.disk > Bytes(0)) out += fmt::format(", disk {}", format_bytes(r.disk_bytes));
        out += ")";
      }
      out += fmt::format("; prefix hits GPU {:.1f}%, CPU {:.1f}%, disk {:.1f}% of prompt tokens\n",
                         100 * r.gpu_prefix_hit_rate, 100 * r.cpu_prefix_hit_rate,
                         100 * r.disk_prefix_hit_rate);
    }
  }
  // Capacity and what binds, for the rows that have them.
  for (const std::size_t i : which) {
    const auto it = a.details.find(i);
    if (it == a.details.end()) continue;
    const run::PlanServeDetail& d = it->second;
    const std::string capacity =
        d.axis == run::CapacityAxis::kMaxConcurrency
            ? (d.capacity_concurrency > 0 ? fmt::format("{} clients", d.capacity_concurrency)
                                          : std::string("not even 1 client"))
            : (d.capacity_requests_per_s > 0.0
                   ? fmt::format("{:.3g} requests/s", d.capacity_requests_per_s)
                   : std::string("no rate"));
    out += fmt::format("  #{}: capacity {}{}; bound by {}{}\n", a.rows[i].index, capacity,
                       d.note.empty() ? "" : " (" + d.note + ")",
                       d.why.kind.empty() ? "?" : d.why.kind,
                       d.why.missed_slo.empty() ? "" : " (above it: " + d.why.missed_slo + ")");
  }
  return out;
}

}  // namespace

std::string plan_serve_table(const run::PlanServeAnswer& a) {
  const run::PlanServeCounts& c = a.counts;
  std::string slo;
  const auto add = [&](const char* name, const std::optional<Duration>& d) {
    if (d) slo += fmt::format("{}{} <= {:.4g} s", slo.empty() ? "" : ", ", name, d->seconds());
  };
  add("p99 TTFT", a.slo.ttft);
  add("p99 TPOT", a.slo.tpot);
  add("p99 E2E", a.slo.e2e);
  std::string out = fmt::format("{}; workload: {}\nobjectives: {}{}\n", a.model, a.workload, slo,
                                a.default_slo ? " (defaults: none given)" : "");
  out += fmt::format(
      "searched {} configurations: {} simulated ({} meet, {} miss, {} of them stopped early{}); "
      "skipped {}: {} do not fit, {} not valid for the model or engine, {} above --max-gpus{}\n",
      c.num_configs, c.num_simulated, c.num_meet, c.num_miss, c.num_stopped_early,
      c.num_resumed > 0 ? fmt::format("; {} from the earlier run's journal", c.num_resumed) : "",
      c.num_skipped_does_not_fit + c.num_skipped_invalid + c.num_skipped_max_gpus +
          c.num_skipped_max_host_memory,
      c.num_skipped_does_not_fit, c.num_skipped_invalid, c.num_skipped_max_gpus,
      a.space.has_kv_tiers()
          ? fmt::format(", {} above the host memory bound", c.num_skipped_max_host_memory)
          : "");
  if (a.space.has_kv_tiers()) out += fmt::format("host memory bound: {}\n", a.host_memory_bound);
  if (!a.cheapest.empty()) {
    out += fmt::format("\nCheapest {} configurations meeting the SLOs ($/M tok: per million "
                       "SLO-meeting output tokens; latencies in s)\n",
                       a.cheapest.size());
    out += configs_table(a, a.cheapest);
    out += fmt::format("\nPareto front, cost per hour against p99 E2E latency ({} "
                       "configurations: none both cheaper and faster)\n",
                       a.pareto.size());
    out += configs_table(a, a.pareto);
  } else if (a.closest) {
    out += "\nClosest to meeting the SLOs\n";
    out += configs_table(a, {*a.closest});
  }
  out += "\n" + run::plan_serve_message(a) + "\n";
  return out;
}

}  // namespace vramsim::cli
