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

}  // namespace

io::TypedRecord option_record(const ServeCandidate& o) {
  io::TypedRecord summary = serve_summary(o.answer);
  if (!o.feasible) summary = summary.zeroed();
  const memory::BudgetResult& b = o.answer.budget.result;
  io::TypedRecord r;
  r.add("name", o.name).add("num_gpus", o.num_gpus).add("feasible", o.feasible);
  for (const char* name : {"throughput_output_tokens_per_s", "throughput_requests_per_s",
                           "goodput_requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
                           "tpot_p99_s"}) {
    r.copy(summary, name);
  }
  r.add("kv_cache_tokens", o.feasible ? b.kv_cache_tokens : 0)
      .add("max_concurrency", io::Ratio{o.feasible ? b.max_concurrency : 0.0})
      .copy(summary, "num_preemptions")
      .add("speedup", io::Ratio{o.feasible ? o.speedup : 0.0})
      .add("scaling_efficiency", io::Ratio{o.feasible ? o.scaling_efficiency : 0.0});
  return r;
}

nlohmann::ordered_json compare_serve_json(const CompareServeAnswer& c) {
  nlohmann::ordered_json j;
  j["mode"] = "serve";
  j["verdict"] = c.verdict;
  j["link"] = c.link;
  if (c.slo.ttft) j["slo_ttft_s"] = c.slo.ttft->seconds();
  if (c.slo.tpot) j["slo_tpot_s"] = c.slo.tpot->seconds();
  if (c.slo.e2e) j["slo_e2e_s"] = c.slo.e2e->seconds();
  j["default_slo"] = c.default_slo;
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
    if (c.price_per_gpu_hour) {
      const double tps = output_tokens_per_s(o.answer);
      x["cost_per_million_output_tokens_usd"] =
          tps > 0 ? cost_per_million_usd(*c.price_per_gpu_hour, o.num_gpus, tps) : 0.0;
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
    for (const char* name : {"name", "num_gpus", "feasible", "throughput_output_tokens_per_s",
                             "goodput_requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
                             "tpot_p99_s", "num_preemptions", "speedup", "scaling_efficiency"}) {
      row.copy(all, name);
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
  w.finish();
}

}  // namespace vramsim::run
