// `vramsim plan train`'s run layer (sim/run/plan_train_run): the search at one global batch,
// its skips and counts, the fastest plans and the Pareto front, bad input, determinism over
// threads, and --resume from a journal.
#include "sim/run/plan_train_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/run/plan_train_results.hpp"
#include "sim/run/sweep_output.hpp"
#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;
using vramsim::training::Strategy;

namespace {

run::TrainOptions options(const std::string& model, const std::string& gpu, int num_gpus,
                          int global_batch, int seq_len, const std::string& extra = "") {
  return run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"" + model + "\"\n[hardware]\ngpu = \"" + gpu +
          "\"\nnum_gpus = " + std::to_string(num_gpus) + "\n[batch]\nglobal_batch = " +
          std::to_string(global_batch) + "\nseq_len = " + std::to_string(seq_len) + "\n" + extra,
      "p.toml"));
}

const run::PlanTrainRow& winner(const run::PlanTrainAnswer& a) {
  REQUIRE(!a.fastest.empty());
  return a.rows[a.fastest.front()];
}

}  // namespace

TEST_CASE("plan train: Llama-3.1-8B on 8 H100 needs sharded state, and the fastest plan that "
          "fits shards it, recomputes nothing and takes the largest micro-batch",
          "[run][plan]") {
  // Hand check. Full-parameter AdamW in bf16-mixed keeps 16 B per parameter (bf16 weights and
  // gradients, fp32 master weights, two fp32 moments: ZeRO, arXiv:1910.02054, sec. 3.1):
  // 8.03e9 x 16 B = 128 GB > 80 GiB, so no DDP plan fits at any micro-batch or checkpointing,
  // while ZeRO-3 over 8 ranks holds 16 GB of it. Among the ZeRO-3 plans, checkpointing "full"
  // recomputes every forward (about a third more compute), and a smaller micro-batch means
  // more micro-batches per step, each gathering the parameters again and each running smaller
  // GEMMs: the fastest is ZeRO-3, no recompute, micro-batch 4 (8 x 4 = 32, one micro-batch).
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.1-8B", "h100-sxm", 8, 32, 2048);
  q.strategies = {"ddp", "zero3"};
  q.tps = {1};
  q.pps = {1};
  q.micro_batches = {1, 2, 4};
  q.checkpointing = {"none", "full"};
  q.offload = {"no"};
  q.jobs = 2;
  const run::PlanTrainAnswer a = run::plan_train(q);
  CHECK(a.counts.num_plans == 12);
  CHECK(a.counts.num_simulated == 12);
  for (const run::PlanTrainRow& r : a.rows) {
    CHECK(r.dp * r.micro_batch * r.num_micro_batches == 32);  // the same global batch
    if (r.strategy == Strategy::kDdp) {
      CHECK(r.status == run::PlanStatus::kDoesNotFit);
      CHECK(r.headroom < vramsim::Bytes(0));
    }
  }
  CHECK(a.counts.num_not_fit >= 6);
  const run::PlanTrainRow& w = winner(a);
  CHECK(w.strategy == Strategy::kZero3);
  CHECK(vramsim::training::to_string(w.checkpointing) == "none");
  CHECK(w.micro_batch == 4);
  CHECK(w.num_micro_batches == 1);
  CHECK(w.flags() == "--strategy zero3 --tp 1 --pp 1 --micro-batch 4 --checkpointing none");
  // Every fitting plan is at least as slow as the winner, and the fastest list is sorted.
  for (std::size_t k = 1; k < a.fastest.size(); ++k) {
    CHECK(a.rows[a.fastest[k - 1]].step_time <= a.rows[a.fastest[k]].step_time);
  }
}

TEST_CASE("plan train's Pareto front holds exactly the fitting plans no other beats in both "
          "step time and headroom",
          "[run][plan]") {
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 64, 2048);
  q.tps = {1, 2};
  q.pps = {1, 2};
  q.micro_batches = {1, 2, 4, 8};
  q.offload = {"no"};
  q.jobs = 2;
  const run::PlanTrainAnswer a = run::plan_train(q);
  REQUIRE(a.counts.num_fit > 3);
  const auto dominates = [](const run::PlanTrainRow& x, const run::PlanTrainRow& y) {
    return x.step_time <= y.step_time && x.headroom >= y.headroom &&
           (x.step_time < y.step_time || x.headroom > y.headroom);
  };
  std::vector<bool> on_front(a.rows.size(), false);
  for (const std::size_t i : a.pareto) on_front[i] = true;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    if (a.rows[i].status != run::PlanStatus::kFits) {
      CHECK(!on_front[i]);
      continue;
    }
    bool dominated = false;
    for (const run::PlanTrainRow& o : a.rows) {
      if (o.status == run::PlanStatus::kFits && dominates(o, a.rows[i])) dominated = true;
    }
    if (dominated) {
      CHECK(!on_front[i]);
      continue;
    }
    // Not dominated: on the front, unless an equal plan (same time and headroom) with a lower
    // index stands for it.
    bool equal_before = false;
    for (std::size_t k = 0; k < i; ++k) {
      const run::PlanTrainRow& o = a.rows[k];
      if (o.status == run::PlanStatus::kFits && o.step_time == a.rows[i].step_time &&
          o.headroom == a.rows[i].headroom) {
        equal_before = true;
      }
    }
    CHECK(on_front[i] != equal_before);
  }
  REQUIRE(!a.pareto.empty());
  CHECK(a.pareto.front() == a.fastest.front());  // the fastest is on the front
  for (std::size_t k = 1; k < a.pareto.size(); ++k) {
    CHECK(a.rows[a.pareto[k - 1]].step_time <= a.rows[a.pareto[k]].step_time);
    CHECK(a.rows[a.pareto[k - 1]].headroom < a.rows[a.pareto[k]].headroom);
  }
}

TEST_CASE("plan train keeps the global batch: plans whose accumulation steps would not be whole "
          "are skipped and counted, sharded strategies at dp 1 too",
          "[run][plan]") {
  // 12 sequences on 8 GPUs: TP 1 (dp 8) never divides 12; TP 2 (dp 4) with micro-batch 1 or 3;
  // TP 4 (dp 2) with 1, 2, 3 (6 too, not searched); TP 8 (dp 1): DDP only, the others are DDP.
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 12, 1024);
  q.strategies = {"ddp", "zero2"};
  q.tps = {1, 2, 4, 8};
  q.pps = {1};
  q.micro_batches = {1, 2, 3, 4};
  q.checkpointing = {"none"};
  q.offload = {"no"};
  const run::PlanTrainAnswer a = run::plan_train(q);
  CHECK(a.counts.num_plans == 32);
  // dp 8: 2 x 4 skipped; dp 4: mb 2, 4 skipped (x2 strategies); dp 2: mb 4 (x2); dp 1 ddp: none.
  CHECK(a.counts.num_skipped_batch == 8 + 4 + 2);
  CHECK(a.counts.num_skipped_same_as_ddp == 4);
  // TP 8 does not divide Llama-3.2-1B's 8 KV heads? It does (8): nothing else is invalid.
  CHECK(a.counts.num_skipped_invalid == 0);
  CHECK(a.counts.num_simulated == 32 - 14 - 4);
  for (const run::PlanTrainRow& r : a.rows) {
    if (r.status == run::PlanStatus::kBatch) {
      CHECK(12 % (r.dp * r.micro_batch) != 0);
      CHECK(r.reason.find("not a multiple of dp x micro-batch") != std::string::npos);
    }
    if (r.simulated()) CHECK(r.dp * r.micro_batch * r.num_micro_batches == 12);
  }
}

TEST_CASE("plan train refuses a global batch no plan of the search can run, and a missing one",
          "[run][plan]") {
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 7, 1024);
  q.tps = {1};
  q.pps = {1};  // dp 8 always: 7 is a multiple of no dp x micro-batch
  try {
    (void)run::plan_train(q);
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    const vramsim::Problem& p = e.report().problems().front();
    CHECK(p.field == "batch.global_batch");
    CHECK(p.where.file == "p.toml");  // the scenario's line
    CHECK(p.message.find("7 sequences per step is not a multiple of dp x micro-batch") !=
          std::string::npos);
  }
  run::PlanTrainRequest none;
  none.options = run::resolve_train_options(run::load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\n", "n.toml"));
  try {
    (void)run::plan_train(none);
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    CHECK(e.report().problems().front().field == "batch.global_batch");
  }
  run::PlanTrainRequest bad;
  bad.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 8, 1024);
  bad.strategies = {"zero4"};
  bad.checkpointing = {"none", "none"};
  try {
    (void)run::plan_train(bad);
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    REQUIRE(e.report().problems().size() == 2);
    CHECK(e.report().problems()[0].field == "plan.strategies");
    CHECK(e.report().problems()[1].message == "none is listed twice");
  }
}

TEST_CASE("plan train where nothing fits answers with the plan closest to fitting",
          "[run][plan]") {
  // Llama-3.1-70B full-parameter on 2 L4 (24 GB each): 70.6e9 x 16 B / 2 = 565 GB per GPU.
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.1-70B", "l4", 2, 2, 1024);
  q.micro_batches = {1};
  q.checkpointing = {"full"};
  const run::PlanTrainAnswer a = run::plan_train(q);
  CHECK(a.counts.num_fit == 0);
  CHECK(a.fastest.empty());
  CHECK(a.pareto.empty());
  REQUIRE(a.closest.has_value());
  const run::PlanTrainRow& c = a.rows[*a.closest];
  for (const run::PlanTrainRow& r : a.rows) {
    if (r.simulated()) CHECK(r.headroom <= c.headroom);
  }
  CHECK(run::plan_train_message(a).rfind("no plan fits", 0) == 0);
}

TEST_CASE("plan train gives the same answer bit for bit on one thread and on two",
          "[run][plan]") {
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 4, 16, 1024);
  q.pps = {1, 2};
  q.micro_batches = {1, 2, 4};
  q.jobs = 1;
  const std::string one = run::plan_train_json(run::plan_train(q)).dump();
  q.jobs = 2;
  const std::string two = run::plan_train_json(run::plan_train(q)).dump();
  CHECK(one == two);
}

TEST_CASE("plan train --resume reuses the plans an interrupted run journaled, and only those of "
          "the same search",
          "[run][plan]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "vramsim_plan_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path out = dir / "resume.h5";
  std::filesystem::remove(out);
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 2, 8, 1024);
  q.strategies = {"ddp"};
  q.checkpointing = {"none", "full"};
  q.offload = {"no"};
  const run::PlanTrainAnswer full = run::plan_train(q);
  REQUIRE(full.counts.num_simulated >= 3);
  // An interrupted run: the journal holds two plans' records, one altered so that reuse shows,
  // and a third of another search (another sequence length), which must run again.
  std::vector<std::size_t> sims;
  for (std::size_t i = 0; i < full.rows.size(); ++i) {
    if (full.rows[i].simulated()) sims.push_back(i);
  }
  const std::string fp = run::plan_search_fingerprint(q.options);
  run::PlanTrainRow altered = full.rows[sims[0]];
  altered.tokens_per_s = 12345.0;
  {
    std::ofstream j(run::journal_path(out));
    j << run::record_to_json(run::plan_row_record(altered, fp)) << "\n";
    j << run::record_to_json(run::plan_row_record(full.rows[sims[1]], fp)) << "\n";
    run::PlanTrainRow other = full.rows[sims[2]];
    other.tokens_per_s = 1.0;
    j << run::record_to_json(run::plan_row_record(
             other, run::plan_search_fingerprint(
                        options("meta-llama/Llama-3.2-1B", "h100-sxm", 2, 8, 2048))))
      << "\n";
  }
  q.out = out;
  q.resume = true;
  const run::PlanTrainAnswer resumed = run::plan_train(q);
  CHECK(resumed.counts.num_resumed == 2);
  CHECK(resumed.rows[sims[0]].tokens_per_s == 12345.0);
  CHECK(resumed.rows[sims[1]].tokens_per_s == full.rows[sims[1]].tokens_per_s);
  CHECK(resumed.rows[sims[2]].tokens_per_s == full.rows[sims[2]].tokens_per_s);
  CHECK(std::filesystem::exists(out));
  CHECK(!std::filesystem::exists(run::journal_path(out)));  // the results file holds it all
}

TEST_CASE("plan train lists equivalent plans once: FSDP FULL_SHARD and HSDP within one node "
          "simulate alike",
          "[run][plan]") {
  // On one node of 8 GPUs HSDP's shard group is the whole node, so it shards like FULL_SHARD:
  // the same step time and memory. The fastest list keeps one of them (the first strategy
  // searched) and names the other. DeepSpeed's ZeRO-3 differs from both by its own buffers
  // (deepspeed_zero_test.cpp), so it stands alone.
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.1-8B", "h100-sxm", 8, 32, 2048);
  q.options.fsdp_wrap_embeddings = true;
  q.strategies = {"fsdp-full", "hsdp", "zero3", "fsdp-grad-op"};
  q.tps = {1};
  q.pps = {1};
  q.micro_batches = {2, 4};
  q.checkpointing = {"none"};
  q.offload = {"no"};
  q.jobs = 1;
  const run::PlanTrainAnswer a = run::plan_train(q);
  REQUIRE(a.fastest.size() >= 2);
  const run::PlanTrainRow& best = winner(a);
  CHECK(best.strategy == Strategy::kFsdpFull);
  REQUIRE(a.equivalent.count(a.fastest.front()) == 1);
  std::vector<Strategy> others;
  for (const std::size_t k : a.equivalent.at(a.fastest.front())) {
    const run::PlanTrainRow& r = a.rows[k];
    others.push_back(r.strategy);
    CHECK(r.step_time == best.step_time);
    CHECK(r.peak == best.peak);
    CHECK(r.micro_batch == best.micro_batch);
  }
  CHECK(others == std::vector<Strategy>{Strategy::kHsdp});
  // No two listed plans are equivalent, and a folded plan is listed nowhere.
  for (std::size_t x = 0; x < a.fastest.size(); ++x) {
    for (std::size_t y = x + 1; y < a.fastest.size(); ++y) {
      const run::PlanTrainRow& rx = a.rows[a.fastest[x]];
      const run::PlanTrainRow& ry = a.rows[a.fastest[y]];
      CHECK_FALSE((rx.micro_batch == ry.micro_batch && rx.step_time == ry.step_time &&
                   rx.peak == ry.peak));
    }
  }
  for (const auto& [kept, folded] : a.equivalent) {
    for (const std::size_t k : folded) {
      CHECK(std::find(a.fastest.begin(), a.fastest.end(), k) == a.fastest.end());
      CHECK(std::find(a.pareto.begin(), a.pareto.end(), k) == a.pareto.end());
    }
  }
  // The JSON names them beside the plan that stands for them.
  const auto j = run::plan_train_json(a);
  REQUIRE(j["fastest"][0]["equivalent_plans"].size() == 1);
  CHECK(j["fastest"][0]["equivalent_plans"][0]["strategy"] == "hsdp");
}

TEST_CASE("plan train searches context- and expert-parallel degrees when they are listed",
          "[run][plan][cp][ep]") {
  // Llama-3.1-8B on 8 H100 at 32,768 tokens, ZeRO-3, full recompute, micro-batch 1, a global
  // batch of 8 sequences: CP=c leaves 8 / c data-parallel ranks, each running 8 / (8 / c) = c
  // micro-batches of 32,768 / c tokens per rank; the layer inputs full recompute keeps shrink
  // by c. EP on this dense model is refused by the model check, as a skipped plan.
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.1-8B", "h100-sxm", 8, 8, 32768);
  q.strategies = {"zero3"};
  q.tps = {1};
  q.pps = {1};
  q.micro_batches = {1};
  q.checkpointing = {"full"};
  q.offload = {"no"};
  q.cps = {1, 2, 4};
  q.eps = {1, 2};
  q.jobs = 2;
  const run::PlanTrainAnswer a = run::plan_train(q);
  CHECK(a.counts.num_plans == 6);
  CHECK(a.counts.num_simulated == 3);
  const run::PlanTrainRow* by_cp[5] = {};
  for (const run::PlanTrainRow& r : a.rows) {
    if (r.ep == 2) {
      CHECK(r.status == run::PlanStatus::kInvalid);
      CHECK(r.reason.rfind("parallel.ep: ", 0) == 0);
      continue;
    }
    REQUIRE(r.simulated());
    CHECK(r.dp == 8 / r.cp);
    CHECK(r.num_micro_batches == r.cp);
    by_cp[r.cp] = &r;
  }
  REQUIRE(by_cp[1] != nullptr);
  REQUIRE(by_cp[2] != nullptr);
  REQUIRE(by_cp[4] != nullptr);
  CHECK(by_cp[4]->peak_allocated < by_cp[2]->peak_allocated);
  CHECK(by_cp[2]->peak_allocated < by_cp[1]->peak_allocated);
  CHECK(by_cp[4]->flags() ==
        "--strategy zero3 --tp 1 --pp 1 --micro-batch 1 --checkpointing full --cp 4");
  // Bad lists name their field.
  run::PlanTrainRequest bad = q;
  bad.cps = {2, 2};
  try {
    (void)run::plan_train(bad);
    FAIL("no error");
  } catch (const vramsim::ConfigError& e) {
    CHECK(e.report().problems().front().field == "plan.cps");
  }
}

TEST_CASE("plan train under --framework searches that framework's data parallelism only",
          "[run][plan]") {
  run::PlanTrainRequest q;
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 8, 1024,
                      "[parallel]\nframework = \"megatron\"\n");
  q.tps = {1};
  q.pps = {1};
  q.micro_batches = {1};
  q.checkpointing = {"full"};
  q.offload = {"no"};
  const vramsim::training::TrainingSetup base = run::resolve_training(q.options);
  CHECK(run::plan_train_space(q, base).strategies ==
        std::vector<Strategy>{Strategy::kDdp, Strategy::kZero1});
  q.options = options("meta-llama/Llama-3.2-1B", "h100-sxm", 8, 8, 1024,
                      "[parallel]\nframework = \"deepspeed\"\n");
  CHECK(run::plan_train_space(q, run::resolve_training(q.options)).strategies ==
        std::vector<Strategy>{Strategy::kDdp, Strategy::kZero1, Strategy::kZero2,
                              Strategy::kZero3});
  // Listed strategies the framework lacks are searched and refused, each with its reason.
  q.strategies = {"fsdp-full", "zero2"};
  const run::PlanTrainAnswer a = run::plan_train(q);
  const auto fsdp = std::find_if(a.rows.begin(), a.rows.end(), [](const run::PlanTrainRow& r) {
    return r.strategy == Strategy::kFsdpFull;
  });
  REQUIRE(fsdp != a.rows.end());
  CHECK(fsdp->status == run::PlanStatus::kInvalid);
  CHECK_THAT(fsdp->reason, Catch::Contains("fsdp-full is PyTorch's FSDP"));
  // Nothing valid at all: the first refusal is the answer.
  q.strategies = {"fsdp-full"};
  CHECK_THROWS_WITH(run::plan_train(q), Catch::Contains("fsdp-full is PyTorch's FSDP"));
}
