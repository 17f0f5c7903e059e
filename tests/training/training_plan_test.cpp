// Training plans: names round-trip, derived degrees, and every bad flag is reported by name.
#include "sim/training/training_plan.hpp"

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {
bool has_problem(const ValidationReport& r, const std::string& field) {
  for (const Problem& p : r.problems()) {
    if (p.field == field) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("every enum name round-trips through from_string", "[training][plan]") {
  for (Strategy s :
       {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kZero3, Strategy::kFsdpFull,
        Strategy::kFsdpGradOp, Strategy::kHsdp, Strategy::kFsdpNoShard}) {
    CHECK(strategy_from_string(to_string(s)) == s);
  }
  for (Precision p :
       {Precision::kBf16Mixed, Precision::kFp16Mixed, Precision::kBf16, Precision::kFp32}) {
    CHECK(precision_from_string(to_string(p)) == p);
  }
  for (Optimizer o : {Optimizer::kAdamW, Optimizer::kAdam, Optimizer::kSgd, Optimizer::kAdam8bit}) {
    CHECK(optimizer_from_string(to_string(o)) == o);
  }
  for (PipelineSchedule s :
       {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved}) {
    CHECK(pipeline_schedule_from_string(to_string(s)) == s);
  }
  CHECK(checkpointing_from_string("every:3") == Checkpointing{CheckpointKind::kEveryK, 3});
  CHECK(to_string(*checkpointing_from_string("every:3")) == "every:3");
  CHECK_FALSE(checkpointing_from_string("every:0"));
  CHECK_FALSE(checkpointing_from_string("every:x"));
  CHECK_FALSE(strategy_from_string("zero-4"));
}

TEST_CASE("dp, micro-batches and shard degree derive from the plan", "[training][plan]") {
  TrainingPlan p;
  p.num_gpus = 64;
  p.tp = 8;
  p.pp = 2;
  p.micro_batch = 2;
  p.global_batch = 64;
  p.strategy = Strategy::kZero3;
  CHECK(p.dp() == 4);
  CHECK(p.num_micro_batches() == 8);
  CHECK(p.shard_degree() == 4);
  p.strategy = Strategy::kHsdp;
  CHECK(p.shard_degree() == 1);  // TP fills the node: one DP rank per node
  p.tp = 2;
  p.pp = 1;
  CHECK(p.dp() == 32);
  CHECK(p.dp_ranks_per_node() == 4);
  CHECK(p.shard_degree() == 4);
  ValidationReport r;
  p.validate(r);
  CHECK(r.ok());
}

TEST_CASE("bad plans name the config path at fault, never a flag", "[training][plan]") {
  TrainingPlan p;
  p.num_gpus = 12;
  p.tp = 8;
  p.micro_batch = 0;
  p.sequence_parallel = false;
  p.pp_interleave = 2;
  ValidationReport r;
  p.validate(r);
  CHECK(has_problem(r, "hardware.num_gpus"));
  CHECK(has_problem(r, "batch.micro_batch"));
  CHECK(has_problem(r, "parallel.pp_interleave"));
}

TEST_CASE("shapes far beyond any real job are refused before they overflow", "[training][plan]") {
  // Regression (bad input catalogue): --seq-len 10^12 aborted on an int64-ns overflow.
  TrainingPlan p;
  p.num_gpus = 8;
  p.seq_len = 1'000'000'000'000;
  ValidationReport r;
  p.validate(r);
  CHECK(has_problem(r, "batch.seq_len"));

  TrainingPlan q;
  q.num_gpus = 8;
  q.seq_len = 1 << 20;
  q.micro_batch = 1 << 13;  // 2^33 tokens per micro-batch
  ValidationReport rq;
  q.validate(rq);
  CHECK(has_problem(rq, "batch.micro_batch"));

  TrainingPlan g;
  g.num_gpus = 1 << 20;
  g.seq_len = 1 << 16;  // 2^36 tokens per step over 2^20 ranks
  ValidationReport rg;
  g.validate(rg);
  CHECK(has_problem(rg, "batch.global_batch"));
}

TEST_CASE("every:K recomputes layers K-1, 2K-1, ...", "[training][plan]") {
  const Checkpointing c{CheckpointKind::kEveryK, 3};
  CHECK_FALSE(c.layer_recomputed(0));
  CHECK_FALSE(c.layer_recomputed(1));
  CHECK(c.layer_recomputed(2));
  CHECK(c.layer_recomputed(5));
}
