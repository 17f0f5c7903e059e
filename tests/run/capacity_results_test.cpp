// The results file of `capacity serve --out` and the JSON of `capacity serve|train`, written by
// the run layer alone (sim/run/capacity_results) from answers built by hand: the probes in the
// order the search ran them, the SLOs that were set and only those, and the answer's fields.
#include "sim/run/capacity_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace vramsim;

run::CapacityRun probe(double rate, bool meets, std::int64_t max_num_seqs) {
  run::CapacityRun r;
  r.rate_per_s = rate;
  r.meets = meets;
  r.ttft_p99 = milliseconds(500);
  r.tpot_p99 = milliseconds(20);
  r.e2e_p99 = seconds(4);
  r.goodput_per_s = meets ? rate : rate / 2;
  r.max_num_seqs = max_num_seqs;
  return r;
}

}  // namespace

TEST_CASE("a capacity serve results file lists the trace probe, the bisection, then max_num_seqs",
          "[run][capacity][results]") {
  const io::testing::ScratchDir dir("run-capacity");
  run::CapacityServeAnswer a;
  a.model = "meta-llama/Llama-3.1-8B";
  a.gpu = "h100-sxm";
  a.workload = "trace t.csv";
  a.ttft_p99 = seconds(2);
  a.trace_probe = probe(3.0, true, 1024);
  a.runs = {probe(3.0, true, 1024), probe(6.0, false, 1024), probe(4.5, true, 1024)};
  a.seq_runs = {probe(4.5, true, 64), probe(4.5, true, 256)};
  a.max_rate_per_s = 4.5;
  a.bracket_low = 4.5;
  a.bracket_high = 6.0;
  a.best_max_num_seqs = 256;
  a.scenario_text = "[model]\n";
  a.seed = 3;
  a.cost_model = "datasheet roofline";
  {
    io::ResultsWriter w(dir / "capacity.h5");
    run::write_capacity_serve(w, a, "vramsim capacity serve");
  }
  const io::ResultsReader in(dir / "capacity.h5");
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim capacity serve");
  CHECK(in.read_string_attribute("/", "calibration_source") == "datasheet roofline");
  CHECK(in.read_int_attribute("/", "seed") == 3);
  CHECK(in.read_string_attribute("/capacity", "mode") == "serve");
  CHECK(in.read_double_attribute("/capacity", "slo_ttft_p99_s") == 2.0);
  CHECK_FALSE(in.has_attribute("/capacity", "slo_tpot_p99_s"));
  CHECK_FALSE(in.has_attribute("/capacity", "slo_e2e_p99_s"));
  CHECK(in.read_double_attribute("/capacity", "max_rate_per_s") == 4.5);
  CHECK(in.read_double_attribute("/capacity", "bracket_high_per_s") == 6.0);
  CHECK(in.read_int_attribute("/capacity", "best_max_num_seqs") == 256);
  CHECK(in.read_int_attribute("/capacity", "num_runs") == 5);  // bisection + max_num_seqs
  CHECK(in.read_int_attribute("/capacity", "num_simulations") == 6);  // and the trace probe

  CHECK(in.read_string_column("/capacity/probes/phase") ==
        std::vector<std::string>{"trace_rate", "bisection", "bisection", "bisection",
                                 "max_num_seqs", "max_num_seqs"});
  CHECK(in.read_int_column("/capacity/probes/probe_index") ==
        std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(in.read_double_column("/capacity/probes/rate_per_s") ==
        std::vector<double>{3.0, 3.0, 6.0, 4.5, 4.5, 4.5});
  CHECK(in.read_int_column("/capacity/probes/max_num_seqs") ==
        std::vector<std::int64_t>{1024, 1024, 1024, 1024, 64, 256});
  CHECK(in.read_int_column("/capacity/probes/meets_slo") ==
        std::vector<std::int64_t>{1, 1, 0, 1, 1, 1});
  CHECK(in.read_units("/capacity/probes/ttft_p99_s") == "s");
  CHECK(in.read_double_column("/capacity/probes/ttft_p99_s").front() == 0.5);
  CHECK(in.read_units("/capacity/probes/rate_per_s") == "1/s");
}

TEST_CASE("capacity serve's JSON carries the SLOs set, the bracket and every run",
          "[run][capacity][results]") {
  run::CapacityServeAnswer a;
  a.model = "meta-llama/Llama-3.1-8B";
  a.gpu = "h100-sxm";
  a.workload = "poisson";
  a.tpot_p99 = milliseconds(100);
  run::CapacityRun r;
  r.rate_per_s = 4.0;
  r.meets = true;
  r.ttft_p99 = milliseconds(250);
  r.max_num_seqs = 256;
  a.trace_probe = r;
  a.runs = {r, r};
  a.runs[1].rate_per_s = 8.0;
  a.runs[1].meets = false;
  a.max_rate_per_s = 4.0;
  a.bracket_low = 4.0;
  a.bracket_high = 8.0;
  nlohmann::ordered_json j = run::capacity_serve_json(a);
  CHECK(j["mode"] == "serve");
  CHECK(j["slo_tpot_p99_s"] == 0.1);
  CHECK_FALSE(j.contains("slo_ttft_p99_s"));
  CHECK(j["max_rate_requests_per_s"] == 4.0);
  CHECK(j["bracket_high_requests_per_s"] == 8.0);
  CHECK(j["num_runs"] == 2);
  CHECK(j["num_simulations"] == 3);  // and the trace probe
  CHECK_FALSE(j.contains("note"));
  CHECK_FALSE(j.contains("max_num_seqs_runs"));  // not searched
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][1]["rate_requests_per_s"] == 8.0);
  CHECK(j["runs"][1]["meets_slo"] == false);
  CHECK(j["runs"][0]["ttft_p99_s"] == 0.25);
  CHECK(j["runs"][0]["max_num_seqs"] == 256);

  a.seq_runs = {r};
  a.best_max_num_seqs = 256;
  a.note = "the search stopped at max_runs";
  j = run::capacity_serve_json(a);
  CHECK(j["best_max_num_seqs"] == 256);
  CHECK(j["max_num_seqs_runs"].size() == 1);
  CHECK(j["note"] == a.note);
  CHECK(j["num_runs"] == 3);
}

TEST_CASE("capacity train's JSON has the plan and one row per checkpointing policy",
          "[run][capacity][training][results]") {
  const training::TrainingSetup s = run::resolve_training(
      run::resolve_train_options(run::load_train_scenario_text(
          "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
          "[batch]\nseq_len = 1024\n",
          "t.toml")));
  std::vector<run::TrainCapacityRow> rows(2);
  rows[0] = {.checkpointing = "none", .max_micro_batch = 8, .max_seq_len = 4096,
             .tokens_per_s_at_max_micro_batch = 1000.0, .num_runs = 7};
  rows[1] = {.checkpointing = "full", .max_micro_batch = 32, .max_seq_len = 16384,
             .tokens_per_s_at_max_micro_batch = 800.0, .num_runs = 9};
  const nlohmann::ordered_json j = run::capacity_train_json(s, rows);
  CHECK(j["mode"] == "train");
  CHECK(j["model"] == s.model.name);
  CHECK(j["gpu"] == "h100-sxm");
  CHECK(j["num_gpus"] == s.plan.num_gpus);
  CHECK(j["seq_len"] == 1024);
  CHECK(j["tp"] == 1);
  CHECK(j["pp"] == 1);
  REQUIRE(j["plans"].size() == 2);
  CHECK(j["plans"][1]["checkpointing"] == "full");
  CHECK(j["plans"][1]["max_micro_batch"] == 32);
  CHECK(j["plans"][1]["max_seq_len"] == 16384);
  CHECK(j["plans"][0]["tokens_per_s_at_max_micro_batch"] == 1000.0);
  CHECK(j["num_runs"] == 16);
}
