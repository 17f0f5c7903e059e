// The training run layer (sim/run/train_run) from C++, without the command line: a scenario's
// text resolved into a setup, the searches, and problems on config paths at their origin.
#include "sim/run/train_run.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"

namespace run = vramsim::run;

namespace {

run::TrainOptions options(const std::string& extra) {
  return run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\nnum_gpus = 8\n" +
          extra,
      "t.toml"));
}

}  // namespace

TEST_CASE("resolve_training turns options into a validated setup", "[run][training]") {
  const vramsim::training::TrainingSetup s =
      run::resolve_training(options("[parallel]\nstrategy = \"fsdp-full\"\n"));
  CHECK(s.device.id == "h100-sxm");
  CHECK(s.plan.num_gpus == 8);
  CHECK(s.plan.gpus_per_node == 8);  // the default: one node up to 8 GPUs
  CHECK(s.plan.strategy == vramsim::training::Strategy::kFsdpFull);
}

TEST_CASE("plan problems name config paths at the scenario's file:line, defaults unlocated",
          "[run][training]") {
  try {
    (void)run::resolve_training(options("[parallel]\ntp = 3\n"));
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    const vramsim::Problem& p = e.report().problems().front();
    CHECK(p.field == "hardware.num_gpus");
    CHECK(p.where.file == "t.toml");
    CHECK(p.where.line == 5);
  }
  try {
    (void)run::resolve_training(options("[batch]\nglobal_batch = 7\nmicro_batch = 2\n"));
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    bool on_path = false;
    for (const vramsim::Problem& p : e.report().problems()) {
      CHECK(p.field.rfind("--", 0) == std::string::npos);  // never a flag
      on_path = on_path || p.field == "batch.global_batch";
    }
    CHECK(on_path);
  }
}

TEST_CASE("find_max_micro_batch and capacity_train search from C++ and record every probe",
          "[run][training]") {
  const vramsim::training::TrainingSetup s = run::resolve_training(
      options("[parallel]\nstrategy = \"fsdp-full\"\n[batch]\nseq_len = 2048\n"));
  std::vector<run::TrainProbe> probes;
  const run::MaxMicroBatch full =
      run::find_max_micro_batch(s, *vramsim::training::checkpointing_from_string("full"), &probes);
  CHECK(full.micro_batch >= 1);
  CHECK(full.result.fits);
  REQUIRE(!probes.empty());
  for (const run::TrainProbe& p : probes) CHECK(p.search == run::TrainSearch::kMicroBatch);

  std::vector<run::TrainProbe> all;
  const std::vector<run::TrainCapacityRow> rows = run::capacity_train(s, &all);
  REQUIRE(rows.size() == 4);
  CHECK(rows.back().checkpointing == "full");
  CHECK(rows.back().max_micro_batch == full.micro_batch);
  std::int64_t num_runs = 0;
  for (const run::TrainCapacityRow& r : rows) num_runs += r.num_runs;
  CHECK(num_runs == static_cast<std::int64_t>(all.size()));
}

TEST_CASE("the DDP bucket cap is PyTorch's 25 MiB by default and sizes the gradient buckets",
          "[run][training][ddp]") {
  const vramsim::training::TrainingSetup def = run::resolve_training(options(""));
  CHECK(def.plan.ddp_bucket == vramsim::MiB(25));  // bucket_cap_mb = 25 is MiB in PyTorch
  const vramsim::training::TrainingSetup s =
      run::resolve_training(options("[parallel]\nddp_bucket_cap = \"64MiB\"\n"));
  CHECK(s.plan.ddp_bucket == vramsim::MiB(64));
  const std::vector<vramsim::training::StagePlan> stages = vramsim::training::plan_stages(s);
  REQUIRE(stages.front().ddp_buckets.size() > 1);
  CHECK(stages.front().ddp_buckets.front() == vramsim::MiB(64));
  try {
    (void)run::resolve_training(options("[parallel]\nddp_bucket_cap = \"64\"\n"));
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    CHECK(e.report().problems().front().field == "parallel.ddp_bucket_cap");
    CHECK(e.report().problems().front().where.line == 7);
  }
}

TEST_CASE("sample lengths read each row's prompt + output as one sample, its problems on "
          "batch.sample_lengths with the file's line",
          "[run][training][samples]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "vramsim_samples";
  std::filesystem::create_directories(dir);
  const std::filesystem::path good = dir / "lengths with spaces.csv";
  {
    std::ofstream f(good, std::ios::binary);  // BOM, CRLF, quoted header
    f << "\xEF\xBB\xBF\"num_prefill_tokens\",\"num_decode_tokens\"\r\n100,28\r\n1000,24\r\n";
  }
  const vramsim::training::TrainingSetup s = run::resolve_training(options(
      "[batch]\nseq_len = 1024\nsample_lengths = \"" + good.generic_string() +
      "\"\npacking = \"documents\"\n"));
  REQUIRE(s.plan.samples);
  CHECK(s.plan.samples->num_samples() == 2);
  CHECK(s.plan.samples->mean(1024) == (128.0 + 1024.0) / 2);  // 1024 truncated to seq_len
  CHECK(s.plan.packing == vramsim::training::Packing::kDocuments);
  const std::filesystem::path bad = dir / "bad.csv";
  {
    std::ofstream f(bad);
    f << "num_prefill_tokens,num_decode_tokens\n10,5\nabc,3\n";
  }
  try {
    (void)run::resolve_training(
        options("[batch]\nsample_lengths = \"" + bad.generic_string() + "\"\n"));
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    const vramsim::Problem& p = e.report().problems().front();
    CHECK(p.field == "batch.sample_lengths");
    CHECK(p.where.line == 3);
    CHECK(p.message.find("'abc'") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
