// `vramsim serve`'s answer as a table for people; its JSON and HDF5 records are the run
// layer's (sim/run/serve_results.hpp).
#include "sim/cli/serve_report.hpp"

#include <fmt/format.h>

#include "sim/run/host_stream_rate.hpp"
#include "sim/run/vllm_version.hpp"

namespace vramsim::cli {

std::string serve_table(const ServeAnswer& a) {
  const serving::ServingResult& r = a.result;
  const serving::ServingMetrics& m = r.metrics;
  const serving::ServingSetup& s = a.config.setup;
  const memory::EngineConfig& e = a.budget.engine;
  const double duration = r.duration_s();
  std::string out;
  if (s.disaggregation) {
    const serving::Disaggregation& d = *s.disaggregation;
    const run::KvTransferLink& l = *a.kv_link;
    out += fmt::format("{} disaggregated {}P{}D: {} prefill x {} TP {}, {} decode x {} TP {}, "
                       "scheduler {}, router {} per pool\n",
                       a.budget.model.name, d.num_prefill, s.num_replicas, d.num_prefill,
                       a.prefill_budget->device.id, a.prefill_budget->engine.tp, s.num_replicas,
                       a.budget.device.id, e.tp, s.scheduler, s.router);
    out += fmt::format("KV transfer: {} link (node {} of {} GPUs), {:.1f} GB/s per direction x "
                       "{} lanes, {:.1f} us latency; {} per prompt token (decode pool's KV "
                       "layout); blocks reserved at the decode instance's next scheduling point\n",
                       l.kind, l.node, l.node_gpus, l.bandwidth.bytes_per_second() / 1e9,
                       l.lanes, 1e6 * l.latency.seconds(), format_bytes(l.bytes_per_token));
    out += fmt::format("Prefill pool: {} KV blocks per instance, max_num_seqs {}, "
                       "max_num_batched_tokens {}\n",
                       d.prefill.kv.num_blocks, d.prefill.limits.max_num_seqs,
                       d.prefill.limits.max_num_batched_tokens);
  } else {
    out += fmt::format("{} on {} x {} (TP {}, PP {}), {}, scheduler {}, router {}\n",
                       a.budget.model.name, s.num_replicas, a.budget.device.id, e.tp, e.pp,
                       run::engine_description(a.budget.vllm_version), s.scheduler, s.router);
  }
  out += fmt::format("Workload: {}\n", a.trace_description);
  if (s.clients.closed()) {
    out += fmt::format("Clients: at most {} requests in flight ({}), think time {:.3f} s\n",
                       s.clients.max_concurrency,
                       s.clients.send_all_at_start
                           ? "closed loop: each client sends its next when its last ends; "
                             "the workload's arrival times are not used"
                           : "the arrival stream waits for a free client",
                       s.clients.think_time.seconds());
  }
  out += fmt::format("Step times: {}\n", a.cost_model);
  out += fmt::format("Validated: {}\n", a.error_band);
  if (a.budget.speculative) {
    const serving::SpeculativeConfig& sc = a.budget.speculative->config;
    const double measured = m.num_speculative_decodes > 0
                                ? static_cast<double>(m.num_speculative_tokens) /
                                      static_cast<double>(m.num_speculative_decodes)
                                : 0.0;
    out += fmt::format("Speculative decoding: {} k = {}, {:.3f} expected tokens per decode step "
                       "({:.3f} emitted on average)\n",
                       serving::to_string(sc.method), sc.num_speculative_tokens,
                       sc.expected_tokens_per_step(), measured);
  }
  if (s.replica.streamed_weights > Bytes(0)) {
    out += fmt::format("Weight offload: {} per device streamed over the host link every step "
                       "(+{:.2f} ms at {:.1f} GB/s; {})\n",
                       format_bytes(s.replica.streamed_weights),
                       1e3 * (s.replica.streamed_weights / s.replica.host_to_device).seconds(),
                       s.replica.host_to_device.bytes_per_second() / 1e9,
                       run::host_copy_rate(a.budget, run::HostCopyDirection::kHostToDevice)
                           .source);
  }
  if (const auto v = run::parse_vllm_version(a.budget.vllm_version);
      v && !run::vllm_behaviour(*v).v1_engine) {
    const run::BudgetRequest& req = a.config.engine;
    out += fmt::format("V0 engine: chunked prefill {}, max_num_batched_tokens {}, max_num_seqs "
                       "{}, block watermark {}; KV cache {}\n",
                       s.replica.limits.enable_chunked_prefill ? "on" : "off",
                       s.replica.limits.max_num_batched_tokens, s.replica.limits.max_num_seqs,
                       s.replica.limits.watermark_blocks,
                       req.num_gpu_blocks != 0 || req.kv_cache_memory_bytes != 0
                           ? "as given"
                           : fmt::format("sized with {}'s start-up rules (V0's memory profile "
                                         "is not modelled; --num-gpu-blocks from its log gives "
                                         "its own)",
                                         run::to_string(run::kOldestModelledV1Vllm)));
  }
  out += fmt::format("KV cache: {} blocks of {} tokens per {}; prefix caching {}; async "
                     "scheduling {}\n\n",
                     s.replica.kv.num_blocks, s.replica.kv.block_size,
                     s.disaggregation ? "decode instance" : "replica",
                     s.replica.kv.enable_prefix_caching ? "on" : "off",
                     s.replica.async_scheduling ? "on" : "off");
  out += fmt::format("Requests: {} arrived, {} finished, {} rejected over {:.1f} s\n",
                     m.num_arrived, m.num_finished, m.num_rejected, duration);
  out += fmt::format("{:<22}{:>10}{:>10}{:>10}{:>10}\n", "latency (s)", "mean", "p50", "p90",
                     "p99");
  const auto row = [&](const char* name, const serving::LatencyHistogram& h) {
    out += fmt::format("{:<22}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}\n", name, h.mean_seconds(),
                       h.quantile(0.5).seconds(), h.quantile(0.9).seconds(),
                       h.quantile(0.99).seconds());
  };
  row("TTFT", m.ttft);
  row("TPOT", m.tpot);
  row("inter-token", m.itl);
  row("end-to-end", m.e2e);
  row("queueing", m.queueing);
  if (s.clients.closed()) row("client wait", r.client_wait);
  if (r.disaggregated) {
    // TTFT above is the client's: the decode instance's first token, after the transfer.
    row("prefill-only TTFT", r.disaggregated->prefill_ttft);
    row("KV transfer", r.disaggregated->transfer);
    row("KV reserve wait", r.disaggregated->reserve_wait);
  }
  out += fmt::format("\nThroughput: {:.2f} requests/s, {:.1f} output tokens/s, {:.1f} total "
                     "tokens/s over {:.2f} s (first send to last finish)\n",
                     run::per_second(m.num_finished, duration),
                     run::per_second(m.num_output_tokens, duration),
                     run::per_second(m.num_prompt_tokens + m.num_output_tokens, duration),
                     duration);
  if (s.slo.any()) {
    out += fmt::format("Goodput: {:.2f} requests/s ({} of {} within the SLOs)\n",
                       run::per_second(m.num_good, duration), m.num_good, m.num_finished);
  }
  out += fmt::format("Preemptions: {}; KV peak {} of {} blocks, mean use {:.1f}%; prefix hit "
                     "rate {:.1f}%{}\n",
                     r.num_preemptions, r.kv_peak_blocks, s.replica.kv.num_blocks,
                     100.0 * r.kv_mean_utilization(), 100.0 * r.prefix_hit_rate(),
                     a.config.enable_prefix_caching
                         ? fmt::format(", {} cached blocks evicted", r.num_evictions)
                         : std::string());
  if (r.disaggregated) {
    const serving::DisaggregatedStats& d = *r.disaggregated;
    out += fmt::format("Pools: prefill {:.1f}% busy ({} steps, {} preemptions, KV peak {} of {} "
                       "blocks); decode {:.1f}% busy ({} steps); {} KV transfers, {}; {} held back "
                       "at a decode scheduling point ({} for a max_num_seqs seat)\n",
                       100.0 * r.prefill_utilization(), d.prefill_num_steps,
                       d.prefill_num_preemptions, d.prefill_kv_peak_blocks,
                       d.prefill_kv_blocks_per_instance, 100.0 * r.decode_utilization(),
                       d.decode_num_steps, d.num_transfers, format_bytes(Bytes(d.transfer_bytes)),
                       d.num_reserve_waits, d.num_reserve_seat_waits);
  }
  if (s.replica.kv.num_offload_blocks > 0) {
    const Bytes block = a.budget.kv_offload.bytes_per_block;
    const bool lmcache = s.replica.kv.offload_backend == serving::KvOffloadBackend::kLmcache;
    out += fmt::format("KV offload tier{}: {} blocks ({}) in host memory per replica; prefix hits "
                       "{:.1f}% GPU, {:.1f}% CPU; host to device {} at {:.1f} GB/s, device to "
                       "host {} at {:.1f} GB/s{}; {} evictions\n",
                       lmcache ? fmt::format(" (LMCache, chunks of {} tokens)",
                                             a.budget.kv_offload.chunk_size)
                               : std::string(),
                       s.replica.kv.num_offload_blocks,
                       format_bytes(a.budget.kv_offload.host_bytes),
                       100.0 * r.gpu_prefix_hit_rate(), 100.0 * r.offload_prefix_hit_rate(),
                       format_bytes(r.num_blocks_offload_loaded * block),
                       s.replica.host_to_device.bytes_per_second() / 1e9,
                       format_bytes(r.num_blocks_offload_stored * block),
                       s.replica.device_to_host.bytes_per_second() / 1e9,
                       lmcache ? " (both blocking the step)" : "", r.num_offload_evictions);
    out += fmt::format("  host copy rates: {}; {}\n",
                       run::host_copy_rate(a.budget, run::HostCopyDirection::kHostToDevice).source,
                       run::host_copy_rate(a.budget, run::HostCopyDirection::kDeviceToHost)
                           .source);
  }
  if (s.replica.kv.num_disk_blocks > 0) {
    const Bytes block = a.budget.kv_offload.bytes_per_block;
    out += fmt::format("KV disk tier: {} blocks ({}) on local disk per replica, written "
                       "through from host memory; prefix hits {:.1f}% disk; blocks loaded {} "
                       "CPU, {} disk (read {} at {:.2f} GB/s); blocks stored {} CPU, {} disk "
                       "(written {} at {:.2f} GB/s, {:.3f} s busy, asynchronous; longest "
                       "queue {:.3f} s); {} evictions\n",
                       s.replica.kv.num_disk_blocks, format_bytes(a.budget.kv_offload.disk_bytes),
                       100.0 * r.disk_prefix_hit_rate(),
                       r.num_blocks_offload_loaded - r.num_blocks_disk_loaded,
                       r.num_blocks_disk_loaded, format_bytes(r.num_blocks_disk_loaded * block),
                       s.replica.disk_read.bytes_per_second() / 1e9, r.num_blocks_offload_stored,
                       r.num_blocks_disk_stored, format_bytes(r.num_blocks_disk_stored * block),
                       s.replica.disk_write.bytes_per_second() / 1e9, r.disk_write_busy.seconds(),
                       r.disk_write_backlog_peak.seconds(), r.num_disk_evictions);
  }
  const serving::TraceStats& t = r.trace_stats;
  if (t.rows_skipped + t.rows_filtered + t.rows_capped > 0) {
    out += fmt::format("Trace rows: {} read, {} skipped as malformed (first at line {}), {} "
                       "filtered, {} capped\n",
                       t.rows_read, t.rows_skipped, t.first_skipped_line, t.rows_filtered,
                       t.rows_capped);
  }
  if (a.config.trace.kind == serving::TraceKind::kSynthetic) {
    out += "\nTo replay a real trace instead: --trace FILE (Azure CSV, Mooncake JSONL, or "
           "arrival_s,prompt_tokens,output_tokens CSV; see scenarios/traces/README.md).\n";
  }
  return out;
}

}  // namespace vramsim::cli
