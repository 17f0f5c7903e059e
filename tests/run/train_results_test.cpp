// A training simulation's records from the run layer alone (sim/run/train_results and
// train_search_results): the JSON objects with DESIGN.md's field names, and the results files of
// `train --out` and `--find-max-micro-batch --out` read back through sim/io/results_reader.
#include "sim/run/train_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/train_search_results.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace vramsim;

// Llama-3.2-1B on two H100 SXM as two pipeline stages: two device rows.
run::TrainOptions two_stage_options() {
  return run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\nnum_gpus = 2\n"
      "[parallel]\nstrategy = \"ddp\"\npp = 2\n[batch]\nmicro_batch = 1\nglobal_batch = 4\n"
      "seq_len = 1024\n",
      "t.toml"));
}

}  // namespace

TEST_CASE("train_json names DESIGN.md's train fields from the binding device, then each stage",
          "[run][training][results]") {
  const training::TrainingSetup s = run::resolve_training(two_stage_options());
  const training::TrainingResult r =
      training::simulate_training(s, {.num_steps = 2, .record_timeline = false});
  const nlohmann::ordered_json j = run::train_json(s, r);
  for (const char* field : {"peak_allocated_bytes", "peak_reserved_bytes", "model_state_bytes",
                            "activation_bytes", "step_time_s", "fits"}) {
    CHECK(j.contains(field));
  }
  const training::DeviceResult* d = run::binding_device(r);
  REQUIRE(d != nullptr);
  CHECK(j["peak_reserved_bytes"] == d->peak_reserved.count());
  CHECK(j["model_state_bytes"] == d->model_state.count());
  CHECK(j["step_time_s"].get<double>() == r.step_time.seconds());
  CHECK(j["pp"] == 2);
  CHECK(j["seq_len"] == 1024);
  CHECK(j["calibration_source"] == "datasheet roofline");
  CHECK(run::cost_summary(s, r) == "datasheet roofline");  // no profile: no basis counts
  REQUIRE(j["devices"].size() == 2);
  CHECK(j["devices"][1]["pp_stage"] == 1);
  // The plan's head is train_plan_json, unchanged.
  const nlohmann::ordered_json plan = run::train_plan_json(s);
  for (const auto& [k, v] : plan.items()) {
    if (k != "num_micro_batches") CHECK(j[k] == v);
  }
}

TEST_CASE("a policy where no micro-batch fits is only named, with fits false",
          "[run][training][results]") {
  const training::TrainingSetup s = run::resolve_training(two_stage_options());
  const std::vector<run::MaxMicroBatch> rows = {{"none", 0, {}}};
  const nlohmann::ordered_json j = run::max_micro_batch_json(s, rows);
  CHECK(j["model"] == "meta-llama/Llama-3.2-1B");
  REQUIRE(j["max_micro_batch"].size() == 1);
  const nlohmann::ordered_json& e = j["max_micro_batch"][0];
  CHECK(e.size() == 3);
  CHECK(e["checkpointing"] == "none");
  CHECK(e["max_micro_batch"] == 0);
  CHECK(e["fits"] == false);
}

TEST_CASE("a train results file written by the run layer reads back: stages, timelines, inputs",
          "[run][training][results]") {
  const io::testing::ScratchDir dir("run-train");
  const run::TrainOptions o = two_stage_options();
  const training::TrainingSetup s = run::resolve_training(o);
  const training::TrainingResult r = training::simulate_training(s, {.num_steps = 2});
  run::write_train_results(s, r, dir / "train.h5", "vramsim train t.toml", o);
  const io::ResultsReader in(dir / "train.h5");
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim train");
  const auto inputs = nlohmann::json::parse(in.read_string_attribute("/", "inputs"));
  CHECK_FALSE(inputs.contains("devices"));
  CHECK(inputs.at("settings").at("parallel.pp").at("value") == 2);
  CHECK(inputs.at("settings").at("parallel.pp").at("origin") == "scenario");

  CHECK(in.read_int_column("/train/devices/device") == std::vector<std::int64_t>{0, 1});
  CHECK(in.read_units("/train/devices/peak_reserved_bytes") == "B");
  CHECK(in.read_units("/train/devices/step_time_s") == "s");
  CHECK(in.read_int_column("/train/devices/peak_reserved_bytes")[1] ==
        r.devices[1].peak_reserved.count());
  REQUIRE_FALSE(r.memory.empty());
  CHECK(in.num_rows("/train/memory_timeline/time_ns") ==
        static_cast<std::int64_t>(r.memory.size()));
  CHECK(in.read_units("/train/memory_timeline/time_ns") == "ns");
  CHECK(in.num_rows("/train/op_timeline/op") == static_cast<std::int64_t>(r.ops.size()));
  CHECK(in.read_int_attribute("/train", "fits") == (r.fits ? 1 : 0));
  CHECK(in.read_double_attribute("/train", "step_time_s") == r.step_time.seconds());
}

TEST_CASE("a --find-max-micro-batch results file holds each policy's answer and every probe",
          "[run][training][results]") {
  const io::testing::ScratchDir dir("run-find-max");
  const run::TrainOptions o = two_stage_options();
  const training::TrainingSetup s = run::resolve_training(o);
  std::vector<run::TrainProbe> probes;
  std::vector<run::MaxMicroBatch> rows;
  for (const char* policy : {"none", "full"}) {
    rows.push_back(
        run::find_max_micro_batch(s, *training::checkpointing_from_string(policy), &probes));
  }
  {
    io::ResultsWriter w(dir / "find_max.h5");
    run::write_max_micro_batch_results(w, s, rows, probes, "vramsim train", o);
  }
  const io::ResultsReader in(dir / "find_max.h5");
  CHECK(in.read_string_column("/max_micro_batch/policies/checkpointing") ==
        std::vector<std::string>{"none", "full"});
  const std::vector<std::int64_t> mb =
      in.read_int_column("/max_micro_batch/policies/max_micro_batch");
  CHECK(mb == std::vector<std::int64_t>{rows[0].micro_batch, rows[1].micro_batch});
  const std::vector<std::int64_t> per_policy =
      in.read_int_column("/max_micro_batch/policies/num_probes");
  CHECK(std::accumulate(per_policy.begin(), per_policy.end(), std::int64_t{0}) ==
        static_cast<std::int64_t>(probes.size()));
  CHECK(in.num_rows("/max_micro_batch/probes/probe_index") ==
        static_cast<std::int64_t>(probes.size()));
  CHECK(in.read_int_attribute("/max_micro_batch", "num_runs") ==
        static_cast<std::int64_t>(probes.size()));
  CHECK(in.read_int_attribute("/max_micro_batch", "pp") == 2);
  CHECK(in.read_units("/max_micro_batch/probes/peak_reserved_bytes") == "B");
}
