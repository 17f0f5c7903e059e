// What makes a training plan that does not fit fit (sim/run/train_run.hpp train_fixes): each
// fix is the plan with that change, simulated again at the same global batch.
#include "sim/run/train_run.hpp"

#include "tests/catch.hpp"

#include <string>

namespace {

using namespace vramsim;

training::TrainingSetup setup_of(const std::string& text) {
  return run::resolve_training(
      run::resolve_train_options(run::load_train_scenario_text(text, "s.toml")));
}

}  // namespace

TEST_CASE("a plan that does not fit gets the changes that make it fit, fastest first",
          "[run][train][advice]") {
  // Llama-3.1-8B, DDP on 8 H100s, 8 x 8,192-token sequences per micro-batch: far too big.
  const training::TrainingSetup s = setup_of(
      "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\nnum_gpus = 8\n"
      "[batch]\nmicro_batch = 8\nseq_len = 8192\n");
  const training::TrainingResult plan =
      training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
  REQUIRE_FALSE(plan.fits);
  const std::vector<run::TrainFix> fixes = run::train_fixes(s, plan);
  REQUIRE_FALSE(fixes.empty());
  REQUIRE(fixes.front().fits);
  CHECK(fixes.front().peak <= fixes.front().capacity);
  // The fitting ones first, fastest first; then the ones that do not fit.
  bool seen_unfit = false;
  double last = 1e300;
  for (const run::TrainFix& f : fixes) {
    INFO(f.change);
    if (!f.fits) {
      seen_unfit = true;
      CHECK(f.peak > f.capacity);
      continue;
    }
    CHECK_FALSE(seen_unfit);
    CHECK(f.tokens_per_s <= last);
    last = f.tokens_per_s;
  }
  // The fix is a plan a user can run: the same plan with those flags fits.
  training::TrainingSetup again = s;
  again.plan.global_batch = s.plan.effective_global_batch();
  again.plan.checkpointing = *training::checkpointing_from_string("full");
  again.plan.strategy = training::Strategy::kFsdpFull;
  again.plan.micro_batch = 1;
  // No single change is enough here: full checkpointing, FSDP and micro-batch 1 together are.
  CHECK(fixes.front().change == "--checkpointing full --strategy fsdp-full --micro-batch 1");
  const training::TrainingResult r =
      training::simulate_training(again, {.num_steps = 1, .record_timeline = false});
  CHECK(r.fits);
  CHECK(r.tokens_per_s == Approx(fixes.front().tokens_per_s));
}

TEST_CASE("a plan that fits needs no fix", "[run][train][advice]") {
  const training::TrainingSetup s = setup_of(
      "[model]\nid = \"meta-llama/Llama-3.2-1B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[batch]\nseq_len = 2048\n");
  const training::TrainingResult r =
      training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
  REQUIRE(r.fits);
  CHECK(run::train_fixes(s, r).empty());
}

TEST_CASE("a sequence too long for one GPU's activations gets context parallelism as its fix",
          "[run][train][advice][cp]") {
  // Llama-3.1-8B, FSDP on 8 H100s, one 131,072-token sequence per rank with full recompute and
  // torchtune's chunked loss: the layer inputs alone (32 x 2 B x 131,072 x 4,096 = 32 GiB) and
  // the recompute buffers overflow 80 GB; CP=2 halves every rank's tokens.
  const training::TrainingSetup s = setup_of(
      "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\nnum_gpus = 8\n"
      "[parallel]\nstrategy = \"fsdp-full\"\n[batch]\nseq_len = 131072\n"
      "[memory]\ncheckpointing = \"full\"\nloss = \"chunked:8\"\n");
  const training::TrainingResult plan =
      training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
  REQUIRE_FALSE(plan.fits);
  const std::vector<run::TrainFix> fixes = run::train_fixes(s, plan);
  REQUIRE_FALSE(fixes.empty());
  CHECK(fixes.front().change == "--cp 2");
  CHECK(fixes.front().fits);
  training::TrainingSetup again = s;
  again.plan.global_batch = s.plan.effective_global_batch();
  again.plan.cp = 2;
  const training::TrainingResult r =
      training::simulate_training(again, {.num_steps = 1, .record_timeline = false});
  CHECK(r.fits);
  CHECK(r.tokens_per_s == Approx(fixes.front().tokens_per_s));
}
