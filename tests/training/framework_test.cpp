// The framework that owns gradients and optimizer (TrainingPlan::framework, --framework), apart
// from the kernels between the matmuls: which one a strategy implies, which strategies each
// runs, and what each allocates, checked by hand against deepspeed/runtime/engine.py,
// fp16/fused_optimizer.py and pipe/engine.py (deepspeedai/DeepSpeed at edaa722) and
// Megatron-LM's param_and_grad_buffer.py.
#include <algorithm>

#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

// Llama-3.2-1B: 1,235,814,400 parameters (the embedding tied to the head).
constexpr std::int64_t kLlama1bParams = 1'235'814'400;
constexpr char kModel[] = "meta-llama/Llama-3.2-1B";

TrainingPlan plan8(Strategy s, std::optional<Framework> f = std::nullopt) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = s;
  p.framework = f;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.micro_batch = 1;
  p.seq_len = 256;
  return p;
}

StagePlan stage_of(const TrainingPlan& p) {
  return plan_stages(testing::zoo_setup(kModel, "h100-sxm", p)).front();
}

std::vector<std::string> problems(const TrainingPlan& p) {
  ValidationReport report;
  p.validate(report);
  std::vector<std::string> out;
  for (const Problem& problem : report.problems()) {
    out.push_back(problem.field + ": " + problem.message);
  }
  return out;
}

}  // namespace

TEST_CASE("without --framework the strategy and the kernels imply one", "[training][framework]") {
  TrainingPlan p;
  const auto in_use = [&](Strategy s, Kernels k) {
    p.strategy = s;
    p.kernels = k;
    return p.framework_in_use();
  };
  CHECK(in_use(Strategy::kDdp, Kernels::kEager) == Framework::kPytorch);
  CHECK(in_use(Strategy::kDdp, Kernels::kMegatron) == Framework::kMegatron);
  CHECK(in_use(Strategy::kZero1, Kernels::kEager) == Framework::kDeepspeed);
  CHECK(in_use(Strategy::kZero1, Kernels::kMegatron) == Framework::kMegatron);
  // Megatron-DeepSpeed: DeepSpeed's ZeRO-2/3 over Megatron-LM's kernels.
  CHECK(in_use(Strategy::kZero2, Kernels::kMegatron) == Framework::kDeepspeed);
  CHECK(in_use(Strategy::kZero3, Kernels::kEager) == Framework::kDeepspeed);
  for (Strategy s : {Strategy::kFsdpFull, Strategy::kFsdpGradOp, Strategy::kFsdpNoShard,
                     Strategy::kHsdp}) {
    CHECK(in_use(s, Kernels::kMegatron) == Framework::kPytorch);
  }
  p.framework = Framework::kMegatron;
  CHECK(in_use(Strategy::kDdp, Kernels::kEager) == Framework::kMegatron);
}

TEST_CASE("each framework runs its own data parallelism and refuses the others by name",
          "[training][framework]") {
  const auto refused = [](const TrainingPlan& p, const std::string& text) {
    const std::vector<std::string> found = problems(p);
    return std::any_of(found.begin(), found.end(), [&](const std::string& m) {
      return m.find(text) != std::string::npos;
    });
  };
  CHECK(problems(plan8(Strategy::kFsdpFull, Framework::kPytorch)).empty());
  CHECK(problems(plan8(Strategy::kDdp, Framework::kDeepspeed)).empty());
  CHECK(problems(plan8(Strategy::kZero1, Framework::kMegatron)).empty());
  CHECK(refused(plan8(Strategy::kZero2, Framework::kPytorch),
                "parallel.framework: zero2 is DeepSpeed's ZeRO"));
  CHECK(refused(plan8(Strategy::kFsdpFull, Framework::kDeepspeed),
                "parallel.framework: fsdp-full is PyTorch's FSDP"));
  CHECK(refused(plan8(Strategy::kZero3, Framework::kMegatron),
                "parallel.framework: Megatron-LM's data parallelism is its DDP"));
  // DeepSpeed's pipeline engine: ZeRO-2/3 refused, and bf16 without ZeRO takes BF16_Optimizer.
  TrainingPlan piped = plan8(Strategy::kZero3);
  piped.pp = 2;
  CHECK(refused(piped, "incompatible with pipeline parallelism"));
  piped.strategy = Strategy::kZero1;
  CHECK(problems(piped).empty());
  piped.strategy = Strategy::kDdp;
  piped.framework = Framework::kDeepspeed;
  CHECK(refused(piped, "BF16_Optimizer"));
  TrainingPlan amp = plan8(Strategy::kDdp, Framework::kDeepspeed);
  amp.precision = Precision::kBf16Amp;
  CHECK(refused(amp, "memory.precision: DeepSpeed casts the model itself"));
}

TEST_CASE("the framework, not the kernels, decides the gradient buffers",
          "[training][framework]") {
  // Megatron-LM's DDP over eager kernels: fp32 main gradients, reduced in place (no buckets).
  const StagePlan megatron = stage_of(plan8(Strategy::kDdp, Framework::kMegatron));
  CHECK(megatron.state.grads == Bytes(4 * kLlama1bParams));
  CHECK(megatron.ddp_buckets.empty());
  // PyTorch DDP over Megatron-LM's kernels: bf16 gradients and the Reducer's bucket copies.
  TrainingPlan torch_ddp = plan8(Strategy::kDdp, Framework::kPytorch);
  torch_ddp.kernels = Kernels::kMegatron;
  const StagePlan pytorch = stage_of(torch_ddp);
  CHECK(pytorch.state.grads == Bytes(2 * kLlama1bParams));
  Bytes bucketed(0);
  for (const Bytes b : pytorch.ddp_buckets) bucketed += b;
  CHECK(bucketed == pytorch.state.grads);
  // Megatron-DeepSpeed (ZeRO-2 over Megatron-LM's kernels): DeepSpeed's bf16 gradients, its IPG
  // bucket (5e8 elements, 2 B) and the step's conversion of the local partition (6 B each).
  TrainingPlan megatron_deepspeed = plan8(Strategy::kZero2);
  megatron_deepspeed.kernels = Kernels::kMegatron;
  const StagePlan mds = stage_of(megatron_deepspeed);
  CHECK(mds.ipg_buckets == Bytes(500'000'000LL * 2));
  CHECK(mds.optimizer_transient == Bytes(kLlama1bParams / 8 * 6));
}

TEST_CASE("DeepSpeed without ZeRO all-reduces after the backward in 5e8-element flat buckets "
          "and converts every gradient to fp32 at the step",
          "[training][framework][deepspeed]") {
  // FP16_Optimizer's step (bf16, one parameter group): each gradient .to(fp32) into a list,
  // then flattened: 4 + 4 B per parameter alive together.
  const TrainingPlan stage0 = plan8(Strategy::kDdp, Framework::kDeepspeed);
  const StagePlan st = stage_of(stage0);
  CHECK(st.ddp_buckets.empty());
  CHECK(st.ipg_buckets == Bytes(0));
  CHECK(st.optimizer_transient == Bytes(kLlama1bParams * 8));
  // fp32: no FP16_Optimizer, the gradients are the optimizer's own.
  TrainingPlan fp32 = stage0;
  fp32.precision = Precision::kFp32;
  CHECK(stage_of(fp32).optimizer_transient == Bytes(0));

  // 1,235,814,400 bf16 gradients: buckets of 5e8, 5e8 and 235,814,400 elements, each starting
  // after the last backward and holding its flat copy only while it runs.
  const TrainingResult r =
      simulate_training(testing::zoo_setup(kModel, "h100-sxm", stage0),
                        {.num_steps = 1, .record_timeline = false});
  std::int32_t last_backward = -1;
  std::vector<Duration> all_reduces;
  for (std::size_t i = 0; i < r.graph.ops.size(); ++i) {
    const Op& o = r.graph.ops[i];
    if (o.kind == OpKind::kBackward) last_backward = static_cast<std::int32_t>(i);
    if (o.kind != OpKind::kAllReduce) continue;
    REQUIRE(!o.deps.empty());
    CHECK(o.deps.front() == last_backward);  // then the device's setup
    CHECK(o.allocs.size() == 1);
    CHECK(o.frees == o.allocs);
    all_reduces.push_back(o.duration);
  }
  REQUIRE(all_reduces.size() == 3);
  CHECK(all_reduces[0] == all_reduces[1]);
  CHECK(all_reduces[2] < all_reduces[0]);
  // Against PyTorch DDP, whose buckets overlap the backward, the reduction is exposed.
  const TrainingResult torch_ddp =
      simulate_training(testing::zoo_setup(kModel, "h100-sxm", plan8(Strategy::kDdp)),
                        {.num_steps = 1, .record_timeline = false});
  CHECK(r.step_time > torch_ddp.step_time);
}

TEST_CASE("torch.optim's foreach AdamW allocates one state's copy and makes a pass per operation",
          "[training][framework][optimizer]") {
  // FSDP FULL_SHARD over 8 ranks: 1,235,814,400 / 8 = 154,476,800 local parameters with fp32
  // master weights and states. _foreach_sqrt(exp_avg_sq): 4 B each.
  TrainingPlan fused = plan8(Strategy::kFsdpFull);
  TrainingPlan foreach = fused;
  foreach.optimizer_impl = OptimizerImpl::kForeach;
  const StagePlan a = stage_of(fused);
  const StagePlan b = stage_of(foreach);
  CHECK(a.optimizer_transient == Bytes(0));
  CHECK(b.optimizer_transient == Bytes(kLlama1bParams / 8 * 4));
  // Bytes per parameter: fused 2 + 2 + 2 (4 + 8) = 28; foreach 4 x 4 + 12 x 4 + 2 x 2 + 2 = 70.
  CHECK(b.optimizer.seconds() / a.optimizer.seconds() == Approx(70.0 / 28.0).epsilon(0.01));
  // Only torch.optim's Adam and AdamW, stepping on the device, under PyTorch.
  const auto refused = [](TrainingPlan p) {
    p.optimizer_impl = OptimizerImpl::kForeach;
    const std::vector<std::string> found = problems(p);
    return found.size() == 1 && found.front().starts_with("memory.optimizer_impl: ");
  };
  CHECK(refused(plan8(Strategy::kZero3)));
  CHECK(refused(plan8(Strategy::kDdp, Framework::kMegatron)));
  TrainingPlan sgd = fused;
  sgd.optimizer = Optimizer::kSgd;
  CHECK(refused(sgd));
  TrainingPlan offloaded = fused;
  offloaded.offload_optimizer = true;
  CHECK(refused(offloaded));
}
