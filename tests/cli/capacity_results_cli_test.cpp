// `--out` of the search commands: `capacity serve`, `capacity train` and `train
// --find-max-micro-batch` write a complete results file (analysis/SCHEMA.md): the metadata, the
// answer, and one probe row per simulation, as many as the JSON output reports.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/io/typed_columns.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::io::ResultsReader;
using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

std::filesystem::path fresh(const std::string& name) {
  const auto path = temp_dir() / name;
  std::filesystem::remove(path);
  return path;
}

std::size_t count(const std::vector<std::string>& v, const std::string& x) {
  return static_cast<std::size_t>(std::count(v.begin(), v.end(), x));
}

}  // namespace

TEST_CASE("capacity serve --out records every probe, the SLOs and the answer",
          "[cli][capacity][results]") {
  const auto out = fresh("capacity_serve.h5");
  const Run r = run("capacity serve " + root() + "/scenarios/default.toml --num-requests 150 "
                    "--slo-ttft-p99 2s --slo-tpot-p99 100ms --precision 0.1 --max-runs 8 "
                    "--search-max-num-seqs --format json --out " + out.string());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const ResultsReader in(out);
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim capacity serve");
  CHECK(in.read_string_attribute("/", "command").find("capacity serve") != std::string::npos);
  CHECK(in.read_string_attribute("/", "scenario_text").find("[model]") != std::string::npos);
  CHECK(!in.read_string_attribute("/", "calibration_source").empty());
  CHECK(nlohmann::json::parse(in.read_string_attribute("/", "inputs")).is_object());

  CHECK(in.read_string_attribute("/capacity", "mode") == "serve");
  CHECK(in.read_double_attribute("/capacity", "slo_ttft_p99_s") == 2.0);
  CHECK(in.read_double_attribute("/capacity", "slo_tpot_p99_s") == 0.1);
  CHECK(!in.has_attribute("/capacity", "slo_e2e_p99_s"));
  CHECK(in.read_double_attribute("/capacity", "max_rate_per_s") ==
        j["max_rate_requests_per_s"].get<double>());
  CHECK(in.read_double_attribute("/capacity", "bracket_high_per_s") ==
        j["bracket_high_requests_per_s"].get<double>());
  CHECK(in.read_int_attribute("/capacity", "best_max_num_seqs") ==
        j["best_max_num_seqs"].get<std::int64_t>());

  const std::string t = "/capacity/probes";
  CHECK(in.table_columns(t) ==
        std::vector<std::string>{"probe_index", "phase", "rate_per_s", "max_num_seqs",
                                 "meets_slo", "ttft_p99_s", "tpot_p99_s", "e2e_p99_s",
                                 "goodput_per_s", "max_concurrency"});
  CHECK(in.read_units(t + "/rate_per_s") == "1/s");
  CHECK(in.read_units(t + "/goodput_per_s") == "1/s");
  CHECK(in.read_units(t + "/ttft_p99_s") == "s");
  CHECK(in.read_units(t + "/meets_slo") == "1");
  const auto phase = in.read_string_column(t + "/phase");
  CHECK(phase.size() == j["num_simulations"].get<std::size_t>());
  CHECK(count(phase, "bisection") == j["runs"].size());
  CHECK(count(phase, "max_num_seqs") == j["max_num_seqs_runs"].size());
  CHECK(j["max_num_seqs_runs"].size() == 9);  // 8, 16, ..., 2048
  // Each bisection probe's row matches the JSON, and the answer is the best rate that met.
  const auto rate = in.read_double_column(t + "/rate_per_s");
  const auto meets = in.read_int_column(t + "/meets_slo");
  const auto ttft = in.read_double_column(t + "/ttft_p99_s");
  double best = 0.0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < phase.size(); ++i) {
    if (phase[i] != "bisection") continue;
    const auto& row = j["runs"][k++];
    CHECK(rate[i] == row["rate_requests_per_s"].get<double>());
    CHECK(meets[i] == (row["meets_slo"].get<bool>() ? 1 : 0));
    CHECK(ttft[i] == Approx(row["ttft_p99_s"].get<double>()));
    if (meets[i] == 1) best = std::max(best, rate[i]);
  }
  CHECK(best == j["max_rate_requests_per_s"].get<double>());
}

TEST_CASE("capacity serve --out on a trace also records the run that measured its rate",
          "[cli][capacity][results]") {
  const auto trace = temp_dir() / "capacity_trace.csv";
  {
    std::ofstream t(trace);
    t << "arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < 60; ++i) t << 0.25 * i << "," << 300 + 17 * i << "," << 40 + i << "\n";
  }
  const auto out = fresh("capacity_trace.h5");
  const Run r = run("capacity serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --trace " +
                    trace.string() + " --slo-ttft-p99 1s --max-runs 4 --format json --out " +
                    out.string());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["num_simulations"].get<std::size_t>() == j["num_runs"].get<std::size_t>() + 1);
  const ResultsReader in(out);
  const auto phase = in.read_string_column("/capacity/probes/phase");
  REQUIRE(phase.size() == j["num_simulations"].get<std::size_t>());
  CHECK(phase.front() == "trace_rate");
  CHECK(count(phase, "bisection") == j["runs"].size());
  // The bisection starts at the rate the first run measured.
  const auto rate = in.read_double_column("/capacity/probes/rate_per_s");
  CHECK(rate[1] == Approx(rate[0]));
  CHECK(in.read_int_attribute("/capacity", "num_simulations") ==
        static_cast<std::int64_t>(phase.size()));
}

TEST_CASE("capacity train --out records each policy's capacity and every probe",
          "[cli][capacity][results]") {
  const auto out = fresh("capacity_train.h5");
  const Run r = run("capacity train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --seq-len 2048 "
                    "--format json --out " + out.string());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const ResultsReader in(out);
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim capacity train");
  // The resolved settings with their origins, as `train --out` records them.
  const auto settings =
      nlohmann::json::parse(in.read_string_attribute("/", "inputs")).at("settings");
  CHECK(settings.at("batch.seq_len").at("origin") == "flag");
  CHECK(settings.at("batch.seq_len").at("value") == 2048);
  CHECK(in.read_string_attribute("/capacity", "mode") == "train");
  CHECK(in.read_string_attribute("/capacity", "gpu") == "h100-sxm");
  CHECK(in.read_int_attribute("/capacity", "device_memory_bytes") > 0);

  const auto policy = in.read_string_column("/capacity/policies/checkpointing");
  CHECK(policy == std::vector<std::string>{"none", "selective", "every:2", "full"});
  const auto max_mb = in.read_int_column("/capacity/policies/max_micro_batch");
  const auto max_seq = in.read_int_column("/capacity/policies/max_seq_len");
  CHECK(in.read_units("/capacity/policies/tokens_per_s") == "1/s");
  for (std::size_t i = 0; i < policy.size(); ++i) {
    CHECK(max_mb[i] == j["plans"][i]["max_micro_batch"].get<std::int64_t>());
    CHECK(max_seq[i] == j["plans"][i]["max_seq_len"].get<std::int64_t>());
  }

  const std::string t = "/capacity/probes";
  CHECK(in.read_units(t + "/peak_allocated_bytes") == "B");
  CHECK(in.read_units(t + "/peak_reserved_bytes") == "B");
  CHECK(in.read_units(t + "/step_time_s") == "s");
  CHECK(in.read_units(t + "/fits") == "1");
  const auto ckpt = in.read_string_column(t + "/checkpointing");
  const auto search = in.read_string_column(t + "/search");
  const auto mb = in.read_int_column(t + "/micro_batch");
  const auto seq = in.read_int_column(t + "/seq_len");
  const auto fits = in.read_int_column(t + "/fits");
  REQUIRE(ckpt.size() == j["num_runs"].get<std::size_t>());
  // The answers follow from the probes: the largest fitting micro-batch (seq_len) probed.
  for (std::size_t i = 0; i < policy.size(); ++i) {
    std::int64_t best_mb = 0, best_seq = 0;
    for (std::size_t p = 0; p < ckpt.size(); ++p) {
      if (ckpt[p] != policy[i] || fits[p] != 1) continue;
      if (search[p] == "micro_batch") best_mb = std::max(best_mb, mb[p]);
      if (search[p] == "seq_len") best_seq = std::max(best_seq, seq[p]);
    }
    CHECK(best_mb == max_mb[i]);
    CHECK(best_seq == max_seq[i]);
  }
}

TEST_CASE("train --find-max-micro-batch --out records every policy's result and the probes",
          "[cli][train][results]") {
  const auto out = fresh("find_max.h5");
  const Run r = run("train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --seq-len 2048 "
                    "--find-max-micro-batch --format json --out " + out.string());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const ResultsReader in(out);
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim train");
  CHECK(in.read_int_attribute("/max_micro_batch", "seq_len") == 2048);
  const std::string p = "/max_micro_batch/policies";
  CHECK(in.table_columns(p) ==
        std::vector<std::string>{"checkpointing", "max_micro_batch", "fits", "binding_stage",
                                 "peak_allocated_bytes", "peak_reserved_bytes",
                                 "non_allocator_bytes", "model_state_bytes", "activation_bytes",
                                 "total_memory_bytes", "step_time_s", "tokens_per_s", "mfu",
                                 "num_probes"});
  for (const char* c : {"peak_allocated_bytes", "peak_reserved_bytes", "model_state_bytes",
                        "activation_bytes"}) {
    CHECK(in.read_units(p + "/" + c) == "B");
  }
  CHECK(in.read_units(p + "/step_time_s") == "s");
  const auto mb = in.read_int_column(p + "/max_micro_batch");
  const auto reserved = in.read_int_column(p + "/peak_reserved_bytes");
  const auto step = in.read_double_column(p + "/step_time_s");
  const auto num_probes = in.read_int_column(p + "/num_probes");
  const auto& rows = j["max_micro_batch"];
  REQUIRE(mb.size() == rows.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < mb.size(); ++i) {
    CHECK(mb[i] == rows[i]["max_micro_batch"].get<std::int64_t>());
    CHECK(reserved[i] == rows[i]["peak_reserved_bytes"].get<std::int64_t>());
    CHECK(step[i] == Approx(rows[i]["step_time_s"].get<double>()));
    total += num_probes[i];
  }
  const auto probe_mb = in.read_int_column("/max_micro_batch/probes/micro_batch");
  CHECK(probe_mb.size() == j["num_runs"].get<std::size_t>());
  CHECK(static_cast<std::int64_t>(probe_mb.size()) == total);
}

TEST_CASE("an --out in a missing directory stops the search commands before any simulation",
          "[cli][capacity][results]") {
  const std::string out = "/nonexistent_vramsim_dir/r.h5";
  for (const std::string& args :
       {"capacity serve " + root() + "/scenarios/default.toml --slo-ttft-p99 2s --out " + out,
        std::string("capacity train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --out ") +
            out,
        std::string("train --model meta-llama/Llama-3.2-1B --gpu h100-sxm "
                    "--find-max-micro-batch --out ") +
            out}) {
    const Run r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("/nonexistent_vramsim_dir") != std::string::npos);
    CHECK(r.out.find("--out") != std::string::npos);
  }
}

TEST_CASE("TypedTable takes each column's units from the values' type", "[cli][results]") {
  using namespace vramsim;
  const auto out = fresh("typed_table.h5");
  {
    io::ResultsWriter w(out);
    const std::vector<Bytes> bytes{Bytes(1), Bytes(std::int64_t{80} << 30)};
    const std::vector<Duration> times{milliseconds(1500), nanoseconds(7)};
    const std::vector<double> rates{2.5, 0.0};
    const std::vector<std::int64_t> counts{3, 4};
    const std::vector<std::string> names{"a", "b"};
    io::TypedTable t;
    t.text("name", names)
        .bytes("peak_bytes", bytes)
        .seconds("step_time_s", times)
        .nanoseconds("step_time_ns", times)
        .rate("tokens_per_s", rates)
        .count("micro_batch", counts)
        .flag("fits", {true, false});
    CHECK(t.num_rows() == 2);
    t.write(w, "/t");
    w.finish();
  }
  const ResultsReader in(out);
  CHECK(in.table_columns("/t") == std::vector<std::string>{"name", "peak_bytes", "step_time_s",
                                                            "step_time_ns", "tokens_per_s",
                                                            "micro_batch", "fits"});
  CHECK(in.read_units("/t/peak_bytes") == "B");
  CHECK(in.column_type("/t/peak_bytes") == io::ColumnType::kInt64);
  CHECK(in.read_int_column("/t/peak_bytes") ==
        std::vector<std::int64_t>{1, std::int64_t{80} << 30});
  CHECK(in.read_units("/t/step_time_s") == "s");
  CHECK(in.read_double_column("/t/step_time_s") ==
        std::vector<double>{1.5, nanoseconds(7).seconds()});
  CHECK(in.read_units("/t/step_time_ns") == "ns");
  CHECK(in.read_int_column("/t/step_time_ns") == std::vector<std::int64_t>{1'500'000'000, 7});
  CHECK(in.read_units("/t/tokens_per_s") == "1/s");
  CHECK(in.read_units("/t/micro_batch") == "1");
  CHECK(in.read_units("/t/fits") == "1");
  CHECK(in.read_int_column("/t/fits") == std::vector<std::int64_t>{1, 0});
  CHECK(in.read_units("/t/name") == "");
}
