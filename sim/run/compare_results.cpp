#include "sim/run/compare_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/train_results.hpp"

namespace vramsim::run {
namespace {

/// USD per million tokens at `tokens_per_s` on `num_gpus` GPUs priced per GPU-hour.
double cost_per_million_usd(double price_per_gpu_hour, int num_gpus, double tokens_per_s) {
  return price_per_gpu_hour * num_gpus / 3600.0 / tokens_per_s * 1e6;
}

// The step-time model of the options that ran (they share the GPU and the calibration).
std::string serve_cost_model(const CompareServeAnswer& c) {
  for (const ServeCandidate& o : c.options) {
    if (o.feasible) return o.answer.cost_model;
  }
  return "none: no option fits";
}

// Each option's KV offload tier (0 without one, or for an option that does not fit) and where
// its prefix hits came from: the JSON's and /compare/options' columns when any option of the
// comparison has a tier (any_kv_tier), one list for both.
io::TypedRecord kv_tier_record(const ServeCandidate& o) {
  const KvOffloadBudget none;
  const KvOffloadBudget& k = o.feasible ? o.answer.budget.kv_offload : none;
  const serving::ServingResult& r = o.answer.result;
  const auto rate = [&](double v) { return io::Ratio{o.feasible ? v : 0.0}; };
  io::TypedRecord t;
  t.add("kv_offload_host_bytes_per_replica", k.host_bytes)
      .add("kv_offload_disk_bytes_per_replica", k.disk_bytes)
      .add("gpu_prefix_hit_rate", rate(r.gpu_prefix_hit_rate()))
      .add("cpu_prefix_hit_rate", rate(r.offload_prefix_hit_rate()))
      .add("disk_prefix_hit_rate", rate(r.disk_prefix_hit_rate()));
  return t;
}

}  // namespace

io::TypedRecord option_record(const ServeCandidate& o) {
  io::TypedRecord summary = serve_summary(o.answer);
  if (!o.feasible) summary = summary.zeroed();
  const memory::BudgetResult& b = o.answer.budget.result;
  const CapacityServeAnswer& cap = o.capacity;
  const Bottleneck& why = o.why;
  const StepSplit& s = why.split;
  io::TypedRecord r;
  r.add("name", o.name).add("num_gpus", o.num_gpus).add("feasible", o.feasible);
  for (const char* name : {"throughput_output_tokens_per_s", "throughput_requests_per_s",
                           "goodput_requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
                           "tpot_p99_s"}) {
    r.copy(summary, name);
  }
  // A replica is one TP group or one pipeline: the KV cache's tokens and concurrency are per
  // replica (for TP=N, across its N GPUs; for N replicas, of each one).
  r.add("kv_cache_tokens_per_replica", o.feasible ? b.kv_cache_tokens : 0)
      .add("max_concurrency_per_replica", io::Ratio{o.feasible ? b.max_concurrency : 0.0})
      .copy(summary, "num_preemptions")
      .add("capacity_requests_per_s", io::PerSecond{cap.max_rate_per_s})
      .add("capacity_low_requests_per_s", io::PerSecond{cap.bracket_low})
      .add("capacity_high_requests_per_s", io::PerSecond{cap.bracket_high})
      .add("capacity_per_gpu_requests_per_s",
           io::PerSecond{o.feasible ? cap.max_rate_per_s / o.num_gpus : 0.0});
  if (cap.axis == CapacityAxis::kMaxConcurrency) {
    // A closed loop's capacity is a client count (its rate columns stay 0): present only then,
    // so that open-loop comparisons keep their shape.
    r.add("capacity_max_concurrency", cap.max_concurrency)
        .add("capacity_low_max_concurrency", cap.concurrency_low)
        .add("capacity_high_max_concurrency", cap.concurrency_high);
  }
  r
      .add("throughput_ratio", io::Ratio{o.throughput_ratio})
      .add("goodput_ratio", io::Ratio{o.goodput_ratio})
      .add("capacity_ratio", io::Ratio{o.capacity_ratio})
      .add("scaling_efficiency", io::Ratio{o.scaling_efficiency})
      .add("slo_output_tokens_per_s", io::PerSecond{o.slo_output_tokens_per_s})
      .add("bottleneck", why.kind)
      .add("bottleneck_detail", why.detail)
      .add("missed_slo_above_capacity", why.missed_slo)
      .add("step_busy_s", io::Seconds{s.busy_s})
      .add("step_prefill_s", io::Seconds{s.prefill_s})
      .add("step_decode_s", io::Seconds{s.decode_s})
      .add("step_compute_s", io::Seconds{s.compute_s})
      .add("step_memory_s", io::Seconds{s.memory_s})
      .add("step_communication_s", io::Seconds{s.communication_s})
      .add("step_overhead_s", io::Seconds{s.overhead_s})
      .add("queued_step_share", io::Ratio{why.queued_share})
      .add("seq_limited_share", io::Ratio{why.seq_limited_share})
      .add("token_limited_share", io::Ratio{why.token_limited_share})
      .add("kv_full_share", io::Ratio{why.kv_full_share})
      .add("capacity_num_preemptions", why.num_preemptions)
      .add("capacity_kv_mean_utilization", io::Ratio{why.kv_mean_utilization});
  return r;
}

nlohmann::ordered_json compare_serve_json(const CompareServeAnswer& c) {
  nlohmann::ordered_json j;
  j["mode"] = "serve";
  j["verdict"] = c.verdict;
  j["best"] = c.best >= 0 ? c.options[static_cast<std::size_t>(c.best)].name : "";
  j["link"] = c.link;
  if (c.slo.ttft) j["slo_ttft_s"] = c.slo.ttft->seconds();
  if (c.slo.tpot) j["slo_tpot_s"] = c.slo.tpot->seconds();
  if (c.slo.e2e) j["slo_e2e_s"] = c.slo.e2e->seconds();
  j["default_slo"] = c.default_slo;
  j["capacity_precision"] = c.precision;
  j["capacity_axis"] = std::string(to_string(c.axis));
  if (c.price_per_gpu_hour) {
    j["price_per_gpu_hour_usd"] = *c.price_per_gpu_hour;
    j["price_source"] = c.price_source;
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ServeCandidate& o : c.options) {
    nlohmann::ordered_json x;
    if (!o.feasible) {
      x["name"] = o.name;
      x["num_gpus"] = o.num_gpus;
      x["feasible"] = o.feasible;
      x["reason"] = o.reason;
      list.push_back(x);
      continue;
    }
    x = option_record(o).to_json();
    if (o.cost_per_million_slo_output_tokens_usd) {
      x["cost_per_million_slo_output_tokens_usd"] = *o.cost_per_million_slo_output_tokens_usd;
    }
    if (any_kv_tier(c)) x.update(kv_tier_record(o).to_json());
    if (o.tie_rate_per_s) {
      x["tie_rate_requests_per_s"] = *o.tie_rate_per_s;
      x["tie_ttft_p99_s"] = o.tie_ttft_p99->seconds();
      x["tie_tpot_p99_s"] = o.tie_tpot_p99->seconds();
    }
    list.push_back(x);
  }
  j["options"] = list;
  return j;
}

nlohmann::ordered_json compare_train_json(const CompareTrainAnswer& c) {
  nlohmann::ordered_json j;
  j["mode"] = "train";
  j["verdict"] = c.verdict;
  j["global_batch"] = c.global_batch;
  if (!c.batch_note.empty()) j["batch_note"] = c.batch_note;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const TrainOption& o : c.options) {
    nlohmann::ordered_json x;
    x["name"] = o.name;
    x["num_gpus"] = o.num_gpus;
    x["valid"] = o.valid;
    if (!o.valid) {
      x["fits"] = false;
      x["reason"] = o.reason;
      list.push_back(x);
      continue;
    }
    x["fits"] = o.result.fits;
    x["micro_batches_per_rank"] = o.setup.plan.num_micro_batches();
    x["peak_allocated_bytes"] = peak_allocated(o.result).count();
    x["peak_reserved_bytes"] = peak_reserved(o.result).count();
    x["step_time_s"] = o.result.step_time.seconds();
    x["tokens_per_s"] = o.result.tokens_per_s;
    x["mfu"] = o.result.mfu;
    x["speedup"] = o.speedup;
    x["scaling_efficiency"] = o.scaling_efficiency;
    if (c.price_per_gpu_hour && o.result.tokens_per_s > 0.0) {
      x["cost_per_million_tokens_usd"] =
          cost_per_million_usd(*c.price_per_gpu_hour, o.num_gpus, o.result.tokens_per_s);
    }
    list.push_back(x);
  }
  j["options"] = list;
  return j;
}

void write_compare_serve(io::ResultsWriter& w, const CompareServeAnswer& c,
                         const std::string& command_line) {
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = compare_serve_json(c).dump(),
                        .calibration_source = serve_cost_model(c),
                        .created_by = "vramsim compare"});
  // Each option's row: the fields of its typed record that the table keeps (SCHEMA.md).
  std::vector<io::TypedRecord> rows;
  for (const ServeCandidate& o : c.options) {
    const io::TypedRecord all = option_record(o);
    io::TypedRecord& row = rows.emplace_back();
    for (const char* name :
         {"name", "num_gpus", "feasible", "throughput_output_tokens_per_s",
          "goodput_requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s",
          "kv_cache_tokens_per_replica", "num_preemptions", "capacity_requests_per_s",
          "capacity_low_requests_per_s", "capacity_high_requests_per_s", "throughput_ratio",
          "goodput_ratio", "capacity_ratio", "scaling_efficiency", "slo_output_tokens_per_s",
          "bottleneck", "step_busy_s", "step_prefill_s", "step_decode_s", "step_compute_s",
          "step_memory_s", "step_communication_s", "step_overhead_s"}) {
      row.copy(all, name);
    }
    // The tier columns of the JSON, present only when an option has a tier (so that other
    // comparisons keep their shape).
    if (any_kv_tier(c)) {
      const io::TypedRecord tier = kv_tier_record(o);
      for (const char* name :
           {"kv_offload_host_bytes_per_replica", "kv_offload_disk_bytes_per_replica",
            "gpu_prefix_hit_rate", "cpu_prefix_hit_rate", "disk_prefix_hit_rate"}) {
        row.copy(tier, name);
      }
    }
  }
  io::TypedRecord::write_rows(w, "/compare/options", rows);
  w.set_string_attribute("/compare", "mode", "serve");
  w.set_string_attribute("/compare", "verdict", c.verdict);
  w.finish();
}

void write_compare_train(io::ResultsWriter& w, const CompareTrainAnswer& c,
                         const std::string& command_line) {
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = compare_train_json(c).dump(),
                        .calibration_source = cost_source(c.options.front().setup),
                        .created_by = "vramsim compare"});
  std::vector<io::TypedRecord> rows;
  for (const TrainOption& o : c.options) {
    // The fullest device's peaks as compare_train_json reports them; zero for an invalid plan.
    const Bytes alloc = o.valid ? peak_allocated(o.result) : Bytes(0);
    const Bytes reserved = o.valid ? peak_reserved(o.result) : Bytes(0);
    io::TypedRecord& row = rows.emplace_back();
    row.add("name", o.name)
        .add("num_gpus", o.num_gpus)
        .add("fits", o.valid && o.result.fits)
        .add("peak_allocated_bytes", alloc)
        .add("peak_reserved_bytes", reserved)
        .add("step_time_s", o.valid ? o.result.step_time : Duration())
        .add("tokens_per_s", io::PerSecond{o.valid ? o.result.tokens_per_s : 0.0})
        .add("speedup", io::Ratio{o.valid ? o.speedup : 0.0})
        .add("scaling_efficiency", io::Ratio{o.valid ? o.scaling_efficiency : 0.0});
  }
  io::TypedRecord::write_rows(w, "/compare/options", rows);
  w.set_string_attribute("/compare", "mode", "train");
  w.set_string_attribute("/compare", "verdict", c.verdict);
  w.set_int_attribute("/compare", "global_batch", c.global_batch);
  w.finish();
}

}  // namespace vramsim::run
