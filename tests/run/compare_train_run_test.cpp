// `compare train` through the run layer alone (sim/run/compare_train_run, compare_results): the
// six plans in order, speed-ups against the one-GPU plan, a plan the model does not allow kept
// with its problem on a config path, the comparison's own bad input on "compare.*" paths, and the
// JSON and results file of the answer.
#include "sim/run/compare_train_run.hpp"

#include <string>
#include <vector>

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/compare_results.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace {

using namespace vramsim;

// Llama-3.2-1B on H100 SXM at 1024 tokens: small enough to fit one GPU and run quickly.
run::CompareTrain small(int num_gpus) {
  run::CompareTrain q;
  q.options = run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[batch]\nseq_len = 1024\n",
      "t.toml"));
  q.num_gpus = num_gpus;
  return q;
}

std::string first_field(const run::CompareTrain& q) {
  try {
    (void)run::compare_train(q);
  } catch (const ConfigError& e) {
    return e.report().problems().front().field;
  }
  return "no error";
}

}  // namespace

TEST_CASE("compare train runs one GPU and six two-GPU plans, speed-ups against one GPU",
          "[run][compare][training]") {
  const run::CompareTrainAnswer a = run::compare_train(small(2));
  REQUIRE(a.options.size() == 7);
  const std::vector<std::string> names = {"1 GPU",     "DDP x2",       "ZeRO-1 x2", "ZeRO-2 x2",
                                          "FSDP full x2", "TP=2", "CP=2"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(a.options[i].name == names[i]);
    CHECK(a.options[i].num_gpus == (i == 0 ? 1 : 2));
    CHECK(a.options[i].valid);
  }
  const run::TrainOption& one = a.options.front();
  REQUIRE(one.result.fits);
  CHECK(one.speedup == 1.0);
  CHECK(one.setup.plan.num_gpus == 1);
  for (const run::TrainOption& o : a.options) {
    if (!o.result.fits) continue;
    CHECK(o.speedup == o.result.tokens_per_s / one.result.tokens_per_s);
    CHECK(o.scaling_efficiency == o.speedup / o.num_gpus);
    // The same work: every plan keeps the micro-batch and the global batch; data parallelism
    // splits the step's micro-batches over its ranks.
    CHECK(o.setup.plan.micro_batch == one.setup.plan.micro_batch);
    CHECK(o.setup.plan.global_batch == a.global_batch);
    CHECK(o.setup.plan.effective_global_batch() == a.global_batch);
    CHECK(o.setup.plan.num_micro_batches() * o.setup.plan.dp() ==
          one.setup.plan.num_micro_batches());
  }
  CHECK(a.options[5].setup.plan.tp == 2);
  CHECK(a.options[6].setup.plan.cp == 2);
  CHECK(a.options[6].setup.plan.dp() == 1);
  CHECK(run::peak_reserved(a.options[4].result) < run::peak_reserved(one.result));  // FSDP shards
  CHECK_FALSE(a.verdict.empty());

  const run::CompareTrainAnswer again = run::compare_train(small(2));
  CHECK(again.verdict == a.verdict);
  CHECK(again.options[3].result.step_time == a.options[3].result.step_time);
}

TEST_CASE("compare train keeps a plan the model does not allow, with its config path",
          "[run][compare][training]") {
  // Llama-3.2-1B has 32 attention heads: TP=3 does not divide them.
  const run::CompareTrainAnswer a = run::compare_train(small(3));
  const run::TrainOption& tp = a.options[5];
  CHECK(tp.name == "TP=3");
  CHECK_FALSE(tp.valid);
  CHECK_FALSE(tp.problem.field.empty());
  CHECK(tp.problem.field.rfind("--", 0) == std::string::npos);  // a path, not a flag
  CHECK(tp.reason == tp.problem.field + ": " + tp.problem.message);
  CHECK(a.options[1].valid);  // DDP x3 runs
}

TEST_CASE("compare train reports its own bad input on compare paths before resolving",
          "[run][compare][training]") {
  CHECK(first_field(small(1)) == "compare.num_gpus");
  CHECK(first_field(small(5000)) == "compare.num_gpus");
  run::CompareTrain q = small(2);
  q.price_per_gpu_hour = 0.0;
  CHECK(first_field(q) == "compare.price_per_gpu_hour");
  q = small(2);
  q.options.num_gpus = 0;  // the plan's own problem comes from resolve_training
  CHECK(first_field(q) == "hardware.num_gpus");
}

TEST_CASE("compare train's JSON and results file carry the documented fields",
          "[run][compare][training][results]") {
  run::CompareTrain q = small(3);
  q.price_per_gpu_hour = 2.0;
  const run::CompareTrainAnswer a = run::compare_train(q);
  const nlohmann::ordered_json j = run::compare_train_json(a);
  CHECK(j["mode"] == "train");
  CHECK(j["verdict"] == a.verdict);
  REQUIRE(j["options"].size() == 7);
  const auto& one = j["options"][0];
  for (const char* f : {"name", "num_gpus", "valid", "fits", "peak_allocated_bytes",
                        "peak_reserved_bytes", "step_time_s", "tokens_per_s", "mfu", "speedup",
                        "scaling_efficiency", "cost_per_million_tokens_usd"}) {
    CHECK(one.contains(f));
  }
  CHECK(one["peak_reserved_bytes"] == run::peak_reserved(a.options[0].result).count());
  // One GPU at 2 USD/h: 2 / 3600 USD per second over its tokens per second, per million.
  CHECK(one["cost_per_million_tokens_usd"].get<double>() ==
        Approx(2.0 / 3600.0 / a.options[0].result.tokens_per_s * 1e6));
  const auto& tp = j["options"][5];
  CHECK(tp["valid"] == false);
  CHECK(tp["fits"] == false);
  CHECK(tp["reason"] == a.options[5].reason);
  CHECK_FALSE(tp.contains("step_time_s"));

  const io::testing::ScratchDir dir("run-compare-train");
  {
    io::ResultsWriter w(dir / "compare.h5");
    run::write_compare_train(w, a, "vramsim compare train");
  }
  const io::ResultsReader in(dir / "compare.h5");
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim compare");
  CHECK(in.read_string_attribute("/compare", "mode") == "train");
  CHECK(in.read_string_attribute("/compare", "verdict") == a.verdict);
  CHECK(in.read_string_column("/compare/options/name").size() == 7);
  const std::vector<std::int64_t> fits = in.read_int_column("/compare/options/fits");
  CHECK(fits.back() == 0);  // TP=3: not possible
  const std::vector<std::int64_t> reserved =
      in.read_int_column("/compare/options/peak_reserved_bytes");
  CHECK(reserved.front() == run::peak_reserved(a.options[0].result).count());
  CHECK(reserved.back() == 0);
  CHECK(in.read_units("/compare/options/step_time_s") == "s");
}

TEST_CASE("compare train runs every option at one global batch, rounding it up only when "
          "N ranks cannot split it",
          "[run][compare][training]") {
  run::CompareTrain q;
  q.options = run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[batch]\nseq_len = 1024\nmicro_batch = 1\nglobal_batch = 8\n",
      "t.toml"));
  q.num_gpus = 2;
  const run::CompareTrainAnswer a = run::compare_train(q);
  CHECK(a.global_batch == 8);
  CHECK(a.batch_note.empty());
  CHECK(a.options[0].setup.plan.num_micro_batches() == 8);  // one GPU accumulates all 8
  CHECK(a.options[1].setup.plan.num_micro_batches() == 4);  // DDP x2: 4 per rank
  CHECK(a.options[5].setup.plan.num_micro_batches() == 8);  // TP=2: one data-parallel rank
  // Same tokens per step: step time is tokens / throughput for every option.
  for (const run::TrainOption& o : a.options) {
    if (!o.valid) continue;
    CHECK(o.result.tokens_per_s * o.result.step_time.seconds() ==
          Approx(8.0 * 1024).epsilon(1e-9));
  }

  q.num_gpus = 3;  // 8 sequences cannot be split over 3 ranks: 9 for every option, said so
  const run::CompareTrainAnswer b = run::compare_train(q);
  CHECK(b.global_batch == 9);
  CHECK(b.batch_note.find("not a multiple of micro-batch x 3 GPUs = 3") != std::string::npos);
  CHECK(b.options[0].setup.plan.num_micro_batches() == 9);
  CHECK(b.options[1].setup.plan.num_micro_batches() == 3);
}

TEST_CASE("compare train offers DDP with expert parallelism for a mixture-of-experts model",
          "[run][compare][training][ep]") {
  run::CompareTrain q;
  q.options = run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"Qwen/Qwen3-30B-A3B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[batch]\nseq_len = 1024\n",
      "t.toml"));
  q.num_gpus = 8;
  const run::CompareTrainAnswer a = run::compare_train(q);
  REQUIRE(a.options.size() == 8);
  const run::TrainOption& ep = a.options.back();
  CHECK(ep.name == "DDP x8 + EP=8");
  REQUIRE(ep.valid);
  CHECK(ep.setup.plan.ep == 8);
  CHECK(ep.setup.plan.dp() == 8);
  // Each GPU keeps 16 of the 128 experts: far less model state than plain DDP.
  const run::TrainOption& ddp = a.options[1];
  REQUIRE(ddp.valid);
  CHECK(ep.result.stages.front().state.total() < ddp.result.stages.front().state.total());
  CHECK(ep.result.devices.front().ep_comm > Duration::zero());
}
