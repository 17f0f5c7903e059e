#include "sim/run/capacity_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/typed_columns.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/train_search_results.hpp"

#include <cstdint>
#include <string_view>

namespace vramsim::run {
namespace {

constexpr std::string_view kGroup = "/capacity";

void add_runs(std::string_view phase, const std::vector<CapacityRun>& runs,
              std::vector<std::string>& phases, std::vector<const CapacityRun*>& all) {
  for (const CapacityRun& r : runs) {
    phases.emplace_back(phase);
    all.push_back(&r);
  }
}

}  // namespace

nlohmann::ordered_json capacity_serve_json(const CapacityServeAnswer& a) {
  nlohmann::ordered_json j;
  j["mode"] = "serve";
  j["model"] = a.model;
  j["gpu"] = a.gpu;
  j["workload"] = a.workload;
  if (a.ttft_p99) j["slo_ttft_p99_s"] = a.ttft_p99->seconds();
  if (a.tpot_p99) j["slo_tpot_p99_s"] = a.tpot_p99->seconds();
  if (a.e2e_p99) j["slo_e2e_p99_s"] = a.e2e_p99->seconds();
  j["axis"] = to_string(a.axis);
  j["max_rate_requests_per_s"] = a.max_rate_per_s;
  j["bracket_low_requests_per_s"] = a.bracket_low;
  j["bracket_high_requests_per_s"] = a.bracket_high;
  if (a.axis == CapacityAxis::kMaxConcurrency) {
    j["max_concurrency"] = a.max_concurrency;
    j["bracket_low_concurrency"] = a.concurrency_low;
    j["bracket_high_concurrency"] = a.concurrency_high;
  }
  j["num_runs"] = a.runs.size() + a.seq_runs.size();
  j["num_simulations"] = a.num_simulations();
  if (!a.note.empty()) j["note"] = a.note;
  const auto rows = [](const std::vector<CapacityRun>& runs) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const CapacityRun& r : runs) {
      list.push_back({{"rate_requests_per_s", r.rate_per_s}, {"max_num_seqs", r.max_num_seqs},
                      {"meets_slo", r.meets}, {"ttft_p99_s", r.ttft_p99.seconds()},
                      {"tpot_p99_s", r.tpot_p99.seconds()}, {"e2e_p99_s", r.e2e_p99.seconds()},
                      {"goodput_requests_per_s", r.goodput_per_s},
                      {"max_concurrency", r.max_concurrency}});
    }
    return list;
  };
  j["runs"] = rows(a.runs);
  if (!a.seq_runs.empty()) {
    j["best_max_num_seqs"] = a.best_max_num_seqs;
    j["max_num_seqs_runs"] = rows(a.seq_runs);
  }
  return j;
}

nlohmann::ordered_json capacity_train_json(const training::TrainingSetup& setup,
                                           const std::vector<TrainCapacityRow>& rows) {
  nlohmann::ordered_json j;
  j["mode"] = "train";
  j["model"] = setup.model.name;
  j["gpu"] = setup.device.id;
  j["num_gpus"] = setup.plan.num_gpus;
  j["strategy"] = training::to_string(setup.plan.strategy);
  j["tp"] = setup.plan.tp;
  j["pp"] = setup.plan.pp;
  j["seq_len"] = setup.plan.seq_len;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::int64_t num_runs = 0;
  for (const TrainCapacityRow& r : rows) {
    list.push_back({{"checkpointing", r.checkpointing},
                    {"max_micro_batch", r.max_micro_batch},
                    {"max_seq_len", r.max_seq_len},
                    {"tokens_per_s_at_max_micro_batch", r.tokens_per_s_at_max_micro_batch},
                    {"num_runs", r.num_runs}});
    num_runs += r.num_runs;
  }
  j["plans"] = list;
  j["num_runs"] = num_runs;
  return j;
}

void write_capacity_serve(io::ResultsWriter& w, const CapacityServeAnswer& a,
                          const std::string& command_line) {
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = a.scenario_text,
                        .seed = static_cast<std::int64_t>(a.seed),
                        .inputs = serve_json(a.first_run)["inputs"].dump(),
                        .calibration_source = a.cost_model,
                        .created_by = "vramsim capacity serve"});
  w.set_string_attribute(kGroup, "mode", "serve");
  w.set_string_attribute(kGroup, "model", a.model);
  w.set_string_attribute(kGroup, "gpu", a.gpu);
  w.set_string_attribute(kGroup, "workload", a.workload);
  if (a.ttft_p99) w.set_double_attribute(kGroup, "slo_ttft_p99_s", a.ttft_p99->seconds());
  if (a.tpot_p99) w.set_double_attribute(kGroup, "slo_tpot_p99_s", a.tpot_p99->seconds());
  if (a.e2e_p99) w.set_double_attribute(kGroup, "slo_e2e_p99_s", a.e2e_p99->seconds());
  w.set_double_attribute(kGroup, "max_rate_per_s", a.max_rate_per_s);
  w.set_double_attribute(kGroup, "bracket_low_per_s", a.bracket_low);
  w.set_double_attribute(kGroup, "bracket_high_per_s", a.bracket_high);
  w.set_int_attribute(kGroup, "best_max_num_seqs", a.best_max_num_seqs);
  w.set_string_attribute(kGroup, "axis", std::string(to_string(a.axis)));
  w.set_int_attribute(kGroup, "max_concurrency", a.max_concurrency);
  w.set_int_attribute(kGroup, "bracket_low_concurrency", a.concurrency_low);
  w.set_int_attribute(kGroup, "bracket_high_concurrency", a.concurrency_high);
  w.set_string_attribute(kGroup, "note", a.note);
  w.set_int_attribute(kGroup, "num_runs",
                      static_cast<std::int64_t>(a.runs.size() + a.seq_runs.size()));
  w.set_int_attribute(kGroup, "num_simulations", static_cast<std::int64_t>(a.num_simulations()));

  std::vector<std::string> phases;
  std::vector<const CapacityRun*> all;
  if (a.trace_probe) {
    phases.emplace_back("trace_rate");
    all.push_back(&*a.trace_probe);
  }
  add_runs("bisection", a.runs, phases, all);
  add_runs("max_num_seqs", a.seq_runs, phases, all);
  std::vector<std::int64_t> index, seqs, clients;
  std::vector<bool> meets;
  std::vector<Duration> ttft, tpot, e2e;
  std::vector<double> rate, goodput;
  for (const CapacityRun* r : all) {
    index.push_back(static_cast<std::int64_t>(index.size()));
    rate.push_back(r->rate_per_s);
    seqs.push_back(r->max_num_seqs);
    meets.push_back(r->meets);
    ttft.push_back(r->ttft_p99);
    tpot.push_back(r->tpot_p99);
    e2e.push_back(r->e2e_p99);
    goodput.push_back(r->goodput_per_s);
    clients.push_back(r->max_concurrency);
  }
  io::TypedTable t;
  t.count("probe_index", index)
      .text("phase", phases)
      .rate("rate_per_s", rate)
      .count("max_num_seqs", seqs)
      .flag("meets_slo", meets)
      .seconds("ttft_p99_s", ttft)
      .seconds("tpot_p99_s", tpot)
      .seconds("e2e_p99_s", e2e)
      .rate("goodput_per_s", goodput)
      .count("max_concurrency", clients);
  t.write(w, "/capacity/probes");
  w.finish();
}

void write_capacity_train(io::ResultsWriter& w, const training::TrainingSetup& setup,
                          const std::vector<TrainCapacityRow>& rows,
                          std::span<const TrainProbe> probes, const std::string& command_line,
                          const TrainOptions& options) {
  write_train_search_metadata(w, setup, command_line, options.scenario_text,
                              "vramsim capacity train", &options);
  w.set_string_attribute(kGroup, "mode", "train");
  write_train_plan_attributes(w, kGroup, setup);
  w.set_int_attribute(kGroup, "seq_len_step", seq_len_step(setup.plan));
  w.set_int_attribute(kGroup, "num_runs", static_cast<std::int64_t>(probes.size()));
  std::vector<std::string> ckpt;
  std::vector<std::int64_t> mb, seq, num_runs;
  std::vector<double> tps;
  for (const TrainCapacityRow& r : rows) {
    ckpt.push_back(r.checkpointing);
    mb.push_back(r.max_micro_batch);
    seq.push_back(r.max_seq_len);
    tps.push_back(r.tokens_per_s_at_max_micro_batch);
    num_runs.push_back(r.num_runs);
  }
  io::TypedTable t;
  t.text("checkpointing", ckpt)
      .count("max_micro_batch", mb)
      .count("max_seq_len", seq)
      .rate("tokens_per_s", tps)
      .count("num_probes", num_runs);
  t.write(w, "/capacity/policies");
  write_train_probes(w, "/capacity/probes", probes);
  w.finish();
}

}  // namespace vramsim::run
