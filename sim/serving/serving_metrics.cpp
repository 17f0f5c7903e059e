#include "sim/serving/serving_metrics.hpp"

namespace vramsim::serving {

void ServingMetrics::on_arrival(const Request& r) {
  if (!started) {
    started = true;
    first_arrival = r.arrival;
    last_advance = r.arrival;
  }
  last_arrival = r.arrival;
  ++num_arrived;
}

// The definitions of `vllm bench serve` (vllm/benchmarks/serve.py, calculate_metrics): only
// finished requests count; TTFT and E2E (vLLM's e2el, `latency`) run from when the request was
// sent; TPOT = (latency - ttft) / (output_len - 1) for output_len > 1; ITL (on_token) pools every
// gap between consecutive tokens of every request.
void ServingMetrics::on_finish(const Request& r) {
  ++num_finished;
  const Duration t_ttft = r.first_token - r.arrival;
  const Duration t_e2e = r.finish - r.arrival;
  ttft.add(t_ttft);
  e2e.add(t_e2e);
  queueing.add(r.first_scheduled - r.arrival);
  std::optional<Duration> t_tpot;
  if (r.output_tokens > 1) {
    t_tpot = Duration::from_nanoseconds((r.finish - r.first_token).nanoseconds() /
                                        (r.output_tokens - 1));
    tpot.add(*t_tpot);
  }
  num_prompt_tokens += r.prompt_tokens;
  num_cached_prefix_tokens += r.num_cached_prefix_tokens;
  num_preemptions += r.num_preemptions;
  if (r.finish > last_finish) last_finish = r.finish;
  const bool good = (!slo_.ttft || t_ttft <= *slo_.ttft) &&
                    (!slo_.tpot || !t_tpot || *t_tpot <= *slo_.tpot) &&
                    (!slo_.e2e || t_e2e <= *slo_.e2e);
  if (good) {
    ++num_good;
    num_good_output_tokens += r.output_tokens;
  }
}

void ServingMetrics::advance(SimTime now, std::int64_t in_system, std::int64_t kv_used_blocks) {
  if (!started || now <= last_advance) return;
  const auto dt = static_cast<long double>((now - last_advance).nanoseconds());
  in_system_ns += dt * static_cast<long double>(in_system);
  kv_used_ns += dt * static_cast<long double>(kv_used_blocks);
  last_advance = now;
}

}  // namespace vramsim::serving
