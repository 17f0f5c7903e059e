#include "sim/run/serve_results.hpp"

#include "sim/run/budget_results.hpp"
#include "sim/run/host_stream_rate.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/table_writer.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace vramsim::run {
namespace {

using serving::LatencyHistogram;

io::ColumnSpec col(const char* name, std::string_view units) {
  io::ColumnSpec c;
  c.name = name;
  c.type = io::ColumnType::kInt64;
  c.units = std::string(units);
  return c;
}

void add_latency(io::TypedRecord& rec, const std::string& name, const LatencyHistogram& h) {
  rec.add(name + "_mean_s", io::Seconds{h.mean_seconds()})
      .add(name + "_p50_s", h.quantile(0.50))
      .add(name + "_p90_s", h.quantile(0.90))
      .add(name + "_p99_s", h.quantile(0.99));
}

class ResultsObserver final : public serving::ServingObserver {
 public:
  explicit ResultsObserver(io::ResultsWriter& w)
      : requests_(w.open_table("/serve/requests",
                               {col("request_id", io::kUnitsCount),
                                col("status", io::kUnitsCount),
                                col("replica", io::kUnitsCount),
                                col("arrival_ns", io::kUnitsNanoseconds),
                                col("first_scheduled_ns", io::kUnitsNanoseconds),
                                col("first_token_ns", io::kUnitsNanoseconds),
                                col("finish_ns", io::kUnitsNanoseconds),
                                col("prompt_tokens", io::kUnitsCount),
                                col("output_tokens", io::kUnitsCount),
                                col("cached_prefix_tokens", io::kUnitsCount),
                                col("num_preemptions", io::kUnitsCount),
                                col("trace_line", io::kUnitsCount)})),
        samples_(w.open_table("/serve/timeseries",
                              {col("time_ns", io::kUnitsNanoseconds),
                               col("replica", io::kUnitsCount),
                               col("num_running", io::kUnitsCount),
                               col("num_waiting", io::kUnitsCount),
                               col("kv_used_blocks", io::kUnitsCount),
                               col("batch_tokens", io::kUnitsCount),
                               col("batch_decodes", io::kUnitsCount),
                               col("step_latency_ns", io::kUnitsNanoseconds)})) {}

  void on_request(const serving::RequestRecord& r) override {
    requests_.append_row({r.id, static_cast<std::int64_t>(r.status), r.replica,
                          r.arrival.nanoseconds(), r.first_scheduled.nanoseconds(),
                          r.first_token.nanoseconds(), r.finish.nanoseconds(), r.prompt_tokens,
                          r.output_tokens, r.cached_prefix_tokens, r.num_preemptions,
                          r.trace_line});
  }
  void on_sample(const serving::TimeSample& s) override {
    samples_.append_row({s.time.nanoseconds(), s.replica, s.num_running, s.num_waiting,
                         s.kv_used_blocks, s.batch_tokens, s.batch_decodes,
                         s.step_latency.nanoseconds()});
  }

 private:
  io::TableWriter requests_;
  io::TableWriter samples_;
};

/// Where the host link's rate in `direction` (ReplicaConfig::host_to_device, device_to_host:
/// every host copy serve simulates) comes from.
std::string host_copy_source(const ServeAnswer& a, HostCopyDirection direction) {
  return host_copy_rate(a.budget, direction).source;
}

/// The time `num_blocks` copies of a block keep one device's host link busy at `rate` (each
/// device moves its own share: bytes_per_block is per device), summed over the run.
io::Seconds offload_seconds(std::int64_t num_blocks, const serving::ServingSetup& s,
                            Bandwidth rate) {
  if (num_blocks == 0) return io::Seconds{0.0};
  return io::Seconds{((num_blocks * s.replica.kv.bytes_per_block) / rate).seconds()};
}

}  // namespace

io::TypedRecord kv_disk_summary(const ServeAnswer& a) {
  const serving::ServingResult& r = a.result;
  const serving::ServingSetup& s = a.config.setup;
  const Bytes block = a.budget.kv_offload.bytes_per_block;  // all devices
  const auto disk_seconds = [&](std::int64_t blocks, Bandwidth bw) {
    if (blocks == 0) return io::Seconds{0.0};
    return io::Seconds{((blocks * block) / bw).seconds()};
  };
  io::TypedRecord rec;
  rec.add("num_blocks", s.replica.kv.num_disk_blocks)
      .add("disk_bytes", a.budget.kv_offload.disk_bytes)
      .add("gpu_prefix_hit_rate", io::Ratio{r.gpu_prefix_hit_rate()})
      .add("cpu_prefix_hit_rate", io::Ratio{r.offload_prefix_hit_rate()})
      .add("disk_prefix_hit_rate", io::Ratio{r.disk_prefix_hit_rate()})
      .add("gpu_hit_tokens",
           r.prefix_hit_tokens - r.offload_hit_tokens - r.disk_hit_tokens)
      .add("cpu_hit_tokens", r.offload_hit_tokens)
      .add("disk_hit_tokens", r.disk_hit_tokens)
      // Host -> GPU copies of host hits (disk hits are copied too, after their read).
      .add("cpu_blocks_loaded", r.num_blocks_offload_loaded - r.num_blocks_disk_loaded)
      .add("cpu_blocks_stored", r.num_blocks_offload_stored)
      .add("disk_blocks_loaded", r.num_blocks_disk_loaded)
      .add("disk_blocks_stored", r.num_blocks_disk_stored)
      .add("disk_read_bytes", r.num_blocks_disk_loaded * block)
      .add("disk_write_bytes", r.num_blocks_disk_stored * block)
      .add("disk_read_s", disk_seconds(r.num_blocks_disk_loaded, s.replica.disk_read))
      .add("disk_write_s", io::Seconds{r.disk_write_busy.seconds()})
      .add("disk_write_backlog_peak_s", io::Seconds{r.disk_write_backlog_peak.seconds()})
      .add("disk_evictions", r.num_disk_evictions);
  return rec;
}

io::TypedRecord disaggregated_summary(const ServeAnswer& a) {
  const serving::ServingResult& r = a.result;
  const serving::DisaggregatedStats& d = *r.disaggregated;
  const KvTransferLink& l = *a.kv_link;
  const memory::EngineConfig& pre = a.prefill_budget->engine;
  const memory::EngineConfig& dec = a.budget.engine;
  const serving::ServingSetup& s = a.config.setup;
  io::TypedRecord rec;
  rec.add("prefill_instances", std::int64_t{d.num_prefill_instances})
      .add("decode_instances", std::int64_t{d.num_decode_instances})
      .add("prefill_gpu", a.prefill_budget->device.id)
      .add("decode_gpu", a.budget.device.id)
      .add("prefill_tp", pre.tp)
      .add("decode_tp", dec.tp)
      .add("prefill_max_num_seqs", s.disaggregation->prefill.limits.max_num_seqs)
      .add("decode_max_num_seqs", s.replica.limits.max_num_seqs)
      .add("prefill_max_num_batched_tokens",
           s.disaggregation->prefill.limits.max_num_batched_tokens)
      .add("decode_max_num_batched_tokens", s.replica.limits.max_num_batched_tokens)
      .add("prefill_utilization", io::Ratio{r.prefill_utilization()})
      .add("decode_utilization", io::Ratio{r.decode_utilization()});
  // The prefill instance's own first token (arrival -> its prefill step's end); the reported
  // ttft_* is the client's, from the decode instance (serving::Disaggregation).
  add_latency(rec, "prefill_ttft", d.prefill_ttft);
  add_latency(rec, "kv_transfer", d.transfer);
  // Prefill done -> the decode instance's blocks reserved (serving::Disaggregation); the
  // transfer starts then.
  add_latency(rec, "kv_reserve_wait", d.reserve_wait);
  rec.add("kv_reserve_num_waited", d.num_reserve_waits)
      .add("kv_reserve_num_seat_waits", d.num_reserve_seat_waits);
  rec.add("kv_transfer_num", d.num_transfers)
      .add("kv_transfer_bytes", Bytes(d.transfer_bytes))
      .add("kv_transfer_bytes_per_token", l.bytes_per_token)
      .add("kv_transfer_lanes", std::int64_t{l.lanes})
      .add("kv_transfer_link_bytes_per_s", io::PerSecond{l.bandwidth.bytes_per_second()})
      .add("kv_transfer_link_latency_s", io::Seconds{l.latency.seconds()})
      .add("prefill_kv_num_blocks", d.prefill_kv_blocks_per_instance)
      .add("prefill_kv_peak_blocks", d.prefill_kv_peak_blocks)
      .add("decode_kv_num_blocks", d.decode_kv_blocks_per_instance)
      .add("decode_kv_peak_blocks", d.decode_kv_peak_blocks)
      .add("prefill_num_steps", d.prefill_num_steps)
      .add("decode_num_steps", d.decode_num_steps)
      .add("prefill_num_preemptions", d.prefill_num_preemptions)
      .add("decode_num_preemptions", d.decode_num_preemptions);
  return rec;
}

double per_second(std::int64_t n, double seconds) {
  return seconds > 0.0 ? static_cast<double>(n) / seconds : 0.0;
}

io::TypedRecord serve_summary(const ServeAnswer& a) {
  const serving::ServingResult& r = a.result;
  const serving::ServingMetrics& m = r.metrics;
  const serving::ServingSetup& s = a.config.setup;
  const double duration = r.duration_s();
  const Bytes offload_block = a.budget.kv_offload.bytes_per_block;  // all devices
  io::TypedRecord rec;
  rec.add("num_requests", m.num_arrived)
      .add("num_finished", m.num_finished)
      .add("num_rejected", m.num_rejected);
  add_latency(rec, "ttft", m.ttft);
  add_latency(rec, "tpot", m.tpot);
  add_latency(rec, "itl", m.itl);
  add_latency(rec, "e2e", m.e2e);
  add_latency(rec, "queueing", m.queueing);
  // vLLM's client_queue_time (vllm/benchmarks/serve.py): due -> sent, behind the client gate.
  add_latency(rec, "client_wait", r.client_wait);
  rec.add("duration_s", io::Seconds{duration})
      .add("throughput_requests_per_s", io::PerSecond{per_second(m.num_finished, duration)})
      .add("throughput_output_tokens_per_s",
           io::PerSecond{per_second(m.num_output_tokens, duration)})
      // vLLM's total_token_throughput: (prompt tokens of finished requests + output tokens) /
      // benchmark_duration (vllm/benchmarks/serve.py, calculate_metrics).
      .add("throughput_total_tokens_per_s",
           io::PerSecond{per_second(m.num_prompt_tokens + m.num_output_tokens, duration)})
      .add("goodput_requests_per_s", io::PerSecond{per_second(m.num_good, duration)})
      .add("num_good", m.num_good)
      .add("num_preemptions", r.num_preemptions)
      .add("prefix_hit_rate", io::Ratio{r.prefix_hit_rate()})
      // Cached prefix blocks overwritten with new content: the reuse the cache size lost.
      .add("kv_evictions", r.num_evictions)
      .add("gpu_prefix_hit_rate", io::Ratio{r.gpu_prefix_hit_rate()})
      .add("cpu_prefix_hit_rate", io::Ratio{r.offload_prefix_hit_rate()})
      .add("kv_offload_num_blocks", s.replica.kv.num_offload_blocks)
      .add("kv_offload_h2d_bytes", r.num_blocks_offload_loaded * offload_block)
      .add("kv_offload_d2h_bytes", r.num_blocks_offload_stored * offload_block)
      .add("kv_offload_h2d_s",
           offload_seconds(r.num_blocks_offload_loaded, s, s.replica.host_to_device))
      .add("kv_offload_d2h_s",
           offload_seconds(r.num_blocks_offload_stored, s, s.replica.device_to_host))
      .add("kv_offload_evictions", r.num_offload_evictions)
      .add("kv_peak_blocks", r.kv_peak_blocks)
      .add("kv_num_blocks", s.replica.kv.num_blocks)
      .add("kv_mean_utilization", io::Ratio{r.kv_mean_utilization()})
      .add("mean_requests_in_system", io::Ratio{r.mean_requests_in_system()})
      .add("peak_requests_in_system", r.peak_requests_in_flight)
      .add("arrival_rate_per_s", io::PerSecond{r.arrival_rate_per_s()})
      .add("max_concurrency", std::int64_t{s.clients.max_concurrency})
      .add("think_time_s", io::Seconds{s.clients.think_time.seconds()})
      .add("num_output_tokens", m.num_output_tokens)
      .add("num_prompt_tokens", m.num_prompt_tokens)
      .add("num_steps", r.num_steps)
      .add("trace_rows_read", r.trace_stats.rows_read)
      .add("trace_rows_skipped", r.trace_stats.rows_skipped)
      .add("trace_rows_filtered", r.trace_stats.rows_filtered)
      .add("trace_rows_capped", r.trace_stats.rows_capped);
  return rec;
}

const io::FieldSchema& serve_summary_schema() {
  // NOTE: every field of serve_summary is present whatever the answer, so the schema of an
  // empty answer is the schema of all (a test checks it against a real run's).
  static const io::FieldSchema schema = serve_summary(ServeAnswer{}).schema();
  return schema;
}

nlohmann::ordered_json serve_json(const ServeAnswer& a) {
  const serving::ServingSetup& s = a.config.setup;
  nlohmann::ordered_json j = serve_summary(a).to_json();
  const memory::EngineConfig& e = a.budget.engine;
  nlohmann::ordered_json in;
  in["model"] = a.budget.model.name;
  in["gpu"] = a.budget.device.id;
  in["tp"] = e.tp;
  in["pp"] = e.pp;
  in["replicas"] = s.num_replicas;
  in["scheduler"] = s.scheduler;
  in["router"] = s.router;
  in["preemption"] = serving::to_string(s.replica.limits.preemption);
  in["enable_prefix_caching"] = s.replica.kv.enable_prefix_caching;
  in["enable_chunked_prefill"] = s.replica.limits.enable_chunked_prefill;
  in["async_scheduling"] = s.replica.async_scheduling;
  in["max_num_seqs"] = s.replica.limits.max_num_seqs;
  in["max_num_batched_tokens"] = s.replica.limits.max_num_batched_tokens;
  in["max_model_len"] = s.max_model_len;
  in["block_size"] = s.replica.kv.block_size;
  in["num_gpu_blocks"] = s.replica.kv.num_blocks;
  in["kv_bytes_per_block"] = s.replica.kv.bytes_per_block.count();
  // The non-torch memory under those blocks and what decided its NCCL NVLS buffers (the node
  // of hardware.topology or the device sheet), as budget reports them (budget_json); the
  // decode pool's when disaggregated.
  // (An answer built without a budget, as capacity's results writer may hold, has no device.)
  if (!a.budget.result.devices.empty()) {
    in["non_torch_bytes"] = headline_device(a.budget.result).non_torch.count();
  }
  if (a.budget.topology_node) in["topology_node"] = a.budget.topology_node->id;
  if (e.tp > 1) {
    in["nvls"] = a.budget.nvls;
    in["nvls_from"] = nvls_source(a.budget);
  }
  in["num_host_blocks"] = s.replica.kv.num_host_blocks;
  in["kv_offload_num_blocks"] = s.replica.kv.num_offload_blocks;
  in["kv_offload_host_bytes"] = a.budget.kv_offload.host_bytes.count();
  // The host copies' rates (swap, KV offload, LoRA, streamed weights) and their sources.
  in["host_to_device_bytes_per_s"] = s.replica.host_to_device.bytes_per_second();
  in["host_to_device_source"] = host_copy_source(a, HostCopyDirection::kHostToDevice);
  in["device_to_host_bytes_per_s"] = s.replica.device_to_host.bytes_per_second();
  in["device_to_host_source"] = host_copy_source(a, HostCopyDirection::kDeviceToHost);
  if (s.slo.ttft) in["slo_ttft_s"] = s.slo.ttft->seconds();
  if (s.slo.tpot) in["slo_tpot_s"] = s.slo.tpot->seconds();
  if (s.slo.e2e) in["slo_e2e_s"] = s.slo.e2e->seconds();
  in["workload"] = a.trace_description;
  in["cost_model"] = a.cost_model;
  in["cost_model_error_band"] = a.error_band;
  in["seed"] = s.seed;
  j["inputs"] = in;
  // Present only when the setting is on (analysis/SCHEMA.md, "vramsim serve").
  if (a.budget.speculative) {
    const serving::SpeculativeConfig& sc = a.budget.speculative->config;
    const serving::ServingMetrics& m = a.result.metrics;
    nlohmann::ordered_json spec = speculative_json(sc);
    spec["num_decode_steps"] = m.num_speculative_decodes;
    spec["tokens_per_decode_step"] =
        m.num_speculative_decodes > 0 ? static_cast<double>(m.num_speculative_tokens) /
                                            static_cast<double>(m.num_speculative_decodes)
                                      : 0.0;
    j["speculative"] = spec;
  }
  if (a.budget.engine.lora) {
    const memory::LoraConfig& l = *a.budget.engine.lora;
    const serving::ServingResult& res = a.result;
    nlohmann::ordered_json lo;
    lo["max_loras"] = l.max_loras;
    lo["max_lora_rank"] = l.max_lora_rank;
    lo["max_cpu_loras"] = l.max_cpu_loras;
    lo["lora_dtype"] = std::string(to_string(l.dtype));
    lo["fully_sharded_loras"] = l.fully_sharded;
    lo["num_adapters"] = a.config.trace.lora.num_adapters;
    lo["adapters_per_step_mean"] =
        res.num_steps > 0 ? static_cast<double>(res.num_lora_adapter_steps) /
                                static_cast<double>(res.num_steps)
                          : 0.0;
    lo["num_adapter_loads"] = res.num_adapter_loads;
    lo["adapter_load_bytes"] = s.replica.lora_adapter_bytes.count();
    j["lora"] = lo;
  }
  if (a.result.disaggregated) {
    nlohmann::ordered_json dj = disaggregated_summary(a).to_json();
    dj["kv_transfer_link"] = a.kv_link->kind;
    dj["kv_transfer_node"] = a.kv_link->node;
    dj["kv_transfer_node_gpus"] = a.kv_link->node_gpus;
    j["disaggregated"] = dj;
  }
  if (s.replica.kv.num_disk_blocks > 0) {
    nlohmann::ordered_json disk = kv_disk_summary(a).to_json();
    // Bandwidths are not a results-file quantity: HDF5 keeps them as text attributes.
    disk["read_bytes_per_s"] = s.replica.disk_read.bytes_per_second();
    disk["write_bytes_per_s"] = s.replica.disk_write.bytes_per_second();
    j["kv_disk"] = disk;
  }
  if (s.replica.streamed_weights > Bytes(0)) {
    nlohmann::ordered_json off;
    off["weights_offloaded_bytes"] = s.replica.streamed_weights.count();
    // The pinned host-to-device rate the weights cross at, and where it comes from
    // (run::host_copy_rate: a calibration profile's copies or the datasheet fallback).
    off["stream_bytes_per_s"] = s.replica.host_to_device.bytes_per_second();
    off["stream_rate_source"] = host_copy_source(a, HostCopyDirection::kHostToDevice);
    off["stream_time_per_step_s"] =
        (s.replica.streamed_weights / s.replica.host_to_device).seconds();
    j["cpu_offload"] = off;
  }
  return j;
}

std::unique_ptr<serving::ServingObserver> make_results_observer(io::ResultsWriter& w) {
  return std::make_unique<ResultsObserver>(w);
}

void write_serve_summary(io::ResultsWriter& w, const ServeAnswer& a) {
  serve_summary(a).write(w, "/serve/summary");
  w.set_string_attribute("/serve", "model", a.budget.model.name);
  w.set_string_attribute("/serve", "gpu", a.budget.device.id);
  w.set_string_attribute("/serve", "scheduler", a.config.setup.scheduler);
  w.set_string_attribute("/serve", "router", a.config.setup.router);
  w.set_string_attribute("/serve", "workload", a.trace_description);
  w.set_string_attribute("/serve", "cost_model", a.cost_model);
  w.set_string_attribute("/serve", "cost_model_error_band", a.error_band);
  w.set_string_attribute("/serve", "host_to_device",
                         host_copy_source(a, HostCopyDirection::kHostToDevice));
  w.set_string_attribute("/serve", "device_to_host",
                         host_copy_source(a, HostCopyDirection::kDeviceToHost));
  if (a.config.setup.replica.kv.num_disk_blocks > 0) {
    kv_disk_summary(a).write(w, "/serve/kv_disk");
    const serving::ReplicaConfig& rc = a.config.setup.replica;
    w.set_string_attribute("/serve/kv_disk", "read_bandwidth",
                           fmt::format("{} B/s", rc.disk_read.bytes_per_second()));
    w.set_string_attribute("/serve/kv_disk", "write_bandwidth",
                           fmt::format("{} B/s", rc.disk_write.bytes_per_second()));
  }
  if (a.result.disaggregated) {
    disaggregated_summary(a).write(w, "/serve/disaggregated");
    w.set_string_attribute("/serve/disaggregated", "kv_transfer_link", a.kv_link->kind);
    w.set_string_attribute("/serve/disaggregated", "kv_transfer_node", a.kv_link->node);
  }
}

}  // namespace vramsim::run
