#include "sim/cli/compare_serve.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vramsim::cli {
namespace {

double p99(const serving::LatencyHistogram& h) { return h.quantile(0.99).seconds(); }

}  // namespace

CompareServeAnswer compare_serve(const CompareServeFlags& f) {
  static constexpr FlagForPath kFlags[] = {
      {"compare.num_gpus", "--num-gpus", ""},
      {"compare.price_per_gpu_hour", "--gpu-price-per-hour", ""},
  };
  const run::ServeOptions o = resolve_serve(f.serve);
  return on_flags(
      o,
      [&] {
        return run::compare_serve(
            {.base = run::serve_config(o), .num_gpus = f.num_gpus,
             .price_per_gpu_hour = f.price_per_gpu_hour});
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
  out += fmt::format("SLOs{}: TTFT <= {}, TPOT <= {}\n\n", c.default_slo ? " (defaults)" : "",
                     c.slo.ttft ? fmt::format("{:.3f} s", c.slo.ttft->seconds()) : "-",
                     c.slo.tpot ? fmt::format("{:.3f} s", c.slo.tpot->seconds()) : "-");
  out += fmt::format("{:<18}{:>5}{:>12}{:>10}{:>10}{:>10}{:>10}{:>10}{:>9}{:>8}{:>7}\n", "option",
                     "GPUs", "out tok/s", "goodput", "TTFT p50", "TTFT p99", "TPOT p50",
                     "TPOT p99", "KV tok", "preempt", "speed");
  for (const ServeCandidate& o : c.options) {
    if (!o.feasible) {
      out += fmt::format("{:<18}{:>5}  does not run: {}\n", o.name, o.num_gpus, o.reason);
      continue;
    }
    const auto& m = o.answer.result.metrics;
    out += fmt::format("{:<18}{:>5}{:>12.1f}{:>10.2f}{:>10.3f}{:>10.3f}{:>10.4f}{:>10.4f}{:>9}{:>8}"
                       "{:>7}\n",
                       o.name, o.num_gpus, run::output_tokens_per_s(o.answer), run::goodput_requests_per_s(o.answer),
                       m.ttft.quantile(0.5).seconds(), p99(m.ttft), m.tpot.quantile(0.5).seconds(),
                       p99(m.tpot), o.answer.budget.result.kv_cache_tokens,
                       o.answer.result.num_preemptions,
                       o.speedup > 0.0 ? fmt::format("{:.2f}x", o.speedup) : "-");
  }
  out += fmt::format("\nVerdict: {}.\n", c.verdict);
  return out;
}

}  // namespace vramsim::cli
