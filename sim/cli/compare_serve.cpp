#include "sim/cli/compare_serve.hpp"
#include "sim/cli/progress_bar.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vramsim::cli {
namespace {

double p99(const serving::LatencyHistogram& h) { return h.quantile(0.99).seconds(); }

std::string ratio(double x) { return x > 0.0 ? fmt::format("{:.2f}x", x) : "-"; }

}  // namespace

CompareServeAnswer compare_serve(const CompareServeFlags& f) {
  ValidationReport refused;
  for (const char* flag :
       {"--tp", "--pp", "--replicas", "--data-parallel-size", "--enable-expert-parallel",
        "--prefill-instances", "--decode-instances", "--prefill-tp", "--decode-tp",
        "--prefill-gpu", "--decode-gpu"}) {
    if (f.serve.settings.given(flag)) {
      refused.error(flag, fmt::format("compare serve sets the split itself (one GPU, TP=N, PP=N, "
                                      "N replicas, DP=N with expert parallelism for an MoE "
                                      "model, 1P1D on 2 GPUs): {} does not apply; give "
                                      "--num-gpus N, or run "
                                      "`vramsim serve` for one split",
                                      flag));
    }
  }
  throw_if_errors(refused);
  static constexpr FlagForPath kFlags[] = {
      {"compare.num_gpus", "--num-gpus", ""},
      {"compare.price_per_gpu_hour", "--gpu-price-per-hour", ""},
      {"compare.precision", "--precision", ""},
      {"compare.max_runs", "--max-runs", ""},
      {"compare.kv_tier", "--compare-kv-tier", ""},
  };
  const run::ServeOptions o = resolve_serve(f.serve);
  // A scenario's disaggregated layout is not silently replaced by compare's own splits.
  for (const run::ServeOptionRow& row : run::serve_option_rows()) {
    const std::string_view path = row.path;
    const bool pool_setting = path == "serving.prefill_instances" ||
                              path == "serving.decode_instances" ||
                              path.starts_with("serving.prefill_") ||
                              path.starts_with("serving.decode_");
    if (pool_setting && o.origin(path).kind == run::OriginKind::kScenario) {
      refused.error(std::string(path),
                    fmt::format("compare serve sets the split itself (one GPU, TP=N, PP=N, N "
                                "replicas, 1P1D on 2 GPUs): the scenario's disaggregated "
                                "setting {} does not apply; remove it from the scenario, or "
                                "run `vramsim serve` for that layout",
                                path));
    }
  }
  throw_if_errors(run::located(o, refused));
  // Each capacity simulation on stderr once the comparison takes a while (progress_bar.hpp).
  ProgressLine progress("compare serve", 1.0);
  std::size_t runs = 0;
  const auto on_run = [&](const std::string& option, const run::CapacityRun& r) {
    ++runs;
    progress.show(fmt::format("{} simulations; {}: {} {}", runs, option,
                              r.max_concurrency > 0
                                  ? fmt::format("{} clients, {:.4g} requests/s",
                                                r.max_concurrency, r.rate_per_s)
                                  : fmt::format("{:.4g} requests/s", r.rate_per_s),
                              r.meets ? "meets the SLOs" : "misses"));
  };
  return on_flags(
      o,
      [&] {
        return run::compare_serve({.base = run::serve_config(o),
                                   .num_gpus = f.num_gpus,
                                   .price_per_gpu_hour = f.price_per_gpu_hour,
                                   .precision = f.precision,
                                   .max_runs = f.max_runs,
                                   .kv_tier_option = f.kv_tier_option,
                                   .on_run = on_run});
      },
      kFlags);
}

std::string compare_serve_table(const CompareServeAnswer& c) {
  std::string out;
  const ServeCandidate* any = nullptr;
  for (const ServeCandidate& o : c.options) {
    if (o.feasible) {
      any = &o;
      break;
    }
  }
  if (any != nullptr) {
    out += fmt::format("{} on {}; workload: {}\n", any->answer.budget.model.name,
                       any->answer.budget.device.name, any->answer.trace_description);
  }
  out += fmt::format("SLOs{}: TTFT <= {}, TPOT <= {}; capacity = the largest rate whose p99s "
                     "meet them (bracket precision {:.0f}%)\n",
                     c.default_slo ? " (defaults)" : "",
                     c.slo.ttft ? fmt::format("{:.3f} s", c.slo.ttft->seconds()) : "-",
                     c.slo.tpot ? fmt::format("{:.3f} s", c.slo.tpot->seconds()) : "-",
                     100 * c.precision);
  if (c.price_per_gpu_hour) {
    out += fmt::format("Price: ${:.2f} per GPU-hour ({})\n", *c.price_per_gpu_hour,
                       c.price_source);
  }
  out += "\nAt the given rate:\n";
  out += fmt::format("{:<18}{:>5}{:>12}{:>10}{:>10}{:>10}{:>9}{:>16}{:>8}{:>8}\n", "option",
                     "GPUs", "out tok/s", "goodput", "TTFT p99", "TPOT p99", "preempt",
                     "KV tok/replica", "thru x", "good x");
  for (const ServeCandidate& o : c.options) {
    if (!o.feasible) {
      out += fmt::format("{:<18}{:>5}  does not run: {}\n", o.name, o.num_gpus, o.reason);
      continue;
    }
    const auto& m = o.answer.result.metrics;
    out += fmt::format("{:<18}{:>5}{:>12.1f}{:>10.2f}{:>10.3f}{:>10.4f}{:>9}{:>16}{:>8}{:>8}\n",
                       o.name, o.num_gpus, run::output_tokens_per_s(o.answer),
                       run::goodput_requests_per_s(o.answer), p99(m.ttft), p99(m.tpot),
                       o.answer.result.num_preemptions, o.answer.budget.result.kv_cache_tokens,
                       ratio(o.throughput_ratio), ratio(o.goodput_ratio));
  }
  if (run::any_kv_tier(c)) {
    out += "\nKV offload tier, and prefix hits at the given rate (shares of prompt tokens):\n";
    for (const ServeCandidate& o : c.options) {
      if (!o.feasible) continue;
      const serving::ServingResult& r = o.answer.result;
      out += fmt::format("  {:<18}{}; GPU {:.1f}%, CPU {:.1f}%, disk {:.1f}%\n", o.name,
                         run::kv_tier_text(o), 100 * r.gpu_prefix_hit_rate(),
                         100 * r.offload_prefix_hit_rate(), 100 * r.disk_prefix_hit_rate());
    }
  }
  out += "\nAt capacity:\n";
  // A closed loop's capacity is the most concurrent clients within the SLOs.
  const bool clients = c.axis == run::CapacityAxis::kMaxConcurrency;
  out += fmt::format("{:<18}{:>10}{:>20}{:>12}{:>8}{:>10}{:>12}  {}\n", "option",
                     clients ? "clients" : "req/s", "bracket",
                     clients ? "clients/GPU" : "req/s/GPU", "cap x", "scaling", "$/M SLO tok",
                     "bound by");
  for (const ServeCandidate& o : c.options) {
    if (!o.feasible) continue;
    const run::CapacityServeAnswer& cap = o.capacity;
    const double value = clients ? static_cast<double>(cap.max_concurrency) : cap.max_rate_per_s;
    const double low = clients ? static_cast<double>(cap.concurrency_low) : cap.bracket_low;
    const double high = clients ? static_cast<double>(cap.concurrency_high) : cap.bracket_high;
    const std::string bracket = high > 0.0 ? fmt::format("[{:.3g}, {:.3g}]", low, high)
                                           : fmt::format("[{:.3g}, -]", low);
    out += fmt::format(
        "{:<18}{:>10.3g}{:>20}{:>12.3g}{:>8}{:>10}{:>12}  {}\n", o.name, value,
        bracket, value / o.num_gpus, ratio(o.capacity_ratio),
        o.scaling_efficiency > 0.0 ? fmt::format("{:.0f}%", 100 * o.scaling_efficiency) : "-",
        o.cost_per_million_slo_output_tokens_usd
            ? fmt::format("{:.3f}", *o.cost_per_million_slo_output_tokens_usd)
            : "-",
        o.why.kind.empty() ? "-" : o.why.kind);
  }
  out += "\nWhy, at capacity:\n";
  for (const ServeCandidate& o : c.options) {
    if (!o.feasible || o.why.kind.empty()) continue;
    out += fmt::format("  {}: {}: {}{}\n", o.name, o.why.kind, o.why.detail,
                       o.why.missed_slo.empty() ? ""
                                                : "; above it: " + o.why.missed_slo);
  }
  out += fmt::format("\nVerdict: {}.\n", c.verdict);
  return out;
}

}  // namespace vramsim::cli
