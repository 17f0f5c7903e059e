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
  std::vector<std::int64_t> index, seqs;
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
      .rate("goodput_per_s", goodput);
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
  w.set_int_attribute(kGroup, "seq_len_step", kSeqLenStep);
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
