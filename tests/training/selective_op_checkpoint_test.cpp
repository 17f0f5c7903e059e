// torchtitan's op-level selective activation checkpointing (--checkpointing selective-op): what
// a Llama layer keeps and recomputes, computed by hand from torchtitan's policy
// (torchtitan/parallelisms/parallelize_llama.py, _apply_ac_to_transformer_block, commit 9dec370:
// keep the outputs of aten.mm except every second one in call order, and SDPA's outputs) and
// from its Llama block (model.py: wq, wk, wv, SDPA, wo, then w1, w3, w2).
#include <algorithm>
#include <filesystem>

#include "sim/model/model_zoo.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

constexpr char kLlama8B[] = "meta-llama/Llama-3.1-8B";

TrainingPlan torchtitan_plan(CheckpointKind kind) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = Strategy::kFsdpFull;
  p.checkpointing = Checkpointing{kind, 1};
  p.micro_batch = 2;
  p.seq_len = 8192;
  return p;
}

const BlockCosts& first_layer(const std::vector<StagePlan>& stages) {
  for (const BlockCosts& c : stages.front().chunks.front()) {
    if (c.layer == 0) return c;
  }
  FAIL("no decoder layer 0");
  return stages.front().chunks.front().front();
}

bool refused(const TrainingPlan& p, const model::ModelSpec& spec, const std::string& text) {
  ValidationReport r;
  p.validate(r);
  p.validate_for_model(spec, r);
  const auto& found = r.problems();
  return std::any_of(found.begin(), found.end(), [&](const Problem& problem) {
    return problem.field == "memory.checkpointing" &&
           problem.message.find(text) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("selective-op parses, prints and recomputes no whole layer", "[training][checkpoint]") {
  const std::optional<Checkpointing> c = checkpointing_from_string("selective-op");
  REQUIRE(c.has_value());
  CHECK(c->kind == CheckpointKind::kSelectiveOp);
  CHECK(to_string(*c) == "selective-op");
  CHECK_FALSE(c->layer_recomputed(0));
}

TEST_CASE("selective-op keeps a Llama-3.1-8B layer's input, wq, wv, SDPA, w1 and w2 outputs",
          "[training][checkpoint]") {
  const TrainingSetup s = testing::zoo_setup(kLlama8B, "h100-sxm",
                                             torchtitan_plan(CheckpointKind::kSelectiveOp));
  // Call order wq (4096), wk (1024), wv (1024), wo (4096), w1 (14336), w3 (14336), w2 (4096):
  // kept wq, wv, w1, w2; recomputed wk, wo, w3.
  const std::vector<SelectiveOpMatmul> m = selective_op_matmuls(s.model);
  REQUIRE(m.size() == 7);
  CHECK(m[1].out_features == 1024);
  CHECK(m[3].out_features == 4096);
  CHECK(m[5].out_features == 14336);
  // Per token: input 4096 + wq 4096 + wv 1024 + SDPA output 4096 + w1 14336 + w2 4096 = 31,744
  // bf16 elements; 2 x 8192 = 16,384 tokens; the log-sum-exp 4 B x 2 x 8192 x 32 heads.
  const std::int64_t tokens = 2 * 8192;
  const Bytes expected(2 * tokens * 31'744 + 4 * tokens * 32);
  CHECK(expected == Bytes(1'042'284'544));
  const LayerActivations acts = layer_activations(s.model, {8192, 2, 1, false, true, 2});
  CHECK(acts.stored_selective_op == expected);
  const BlockCosts op = first_layer(plan_stages(s));
  CHECK(op.stored == expected);
  CHECK(op.rematerialized == acts.stored_none - expected);
  CHECK(op.forward_transient == acts.recompute_peak);
}

TEST_CASE("selective-op recomputes more than selective and less than full",
          "[training][checkpoint]") {
  const auto layer = [](CheckpointKind kind) {
    return first_layer(
        plan_stages(testing::zoo_setup(kLlama8B, "h100-sxm", torchtitan_plan(kind))));
  };
  const BlockCosts none = layer(CheckpointKind::kNone);
  const BlockCosts selective = layer(CheckpointKind::kSelective);
  const BlockCosts op = layer(CheckpointKind::kSelectiveOp);
  const BlockCosts full = layer(CheckpointKind::kFull);
  CHECK(none.recompute == Duration::zero());
  CHECK(selective.recompute < op.recompute);
  CHECK(op.recompute < full.recompute);
  CHECK(full.stored < op.stored);
  CHECK(op.stored < none.stored);
  // The forward and backward themselves do not change with the policy.
  CHECK(op.forward == none.forward);
  CHECK(op.backward == none.backward);
  // A whole simulated step: memory between full and none, time between them too.
  const auto step = [](CheckpointKind kind) {
    return simulate_training(testing::zoo_setup(kLlama8B, "h100-sxm", torchtitan_plan(kind)),
                             {2, false, false});
  };
  const TrainingResult rn = step(CheckpointKind::kNone);
  const TrainingResult ro = step(CheckpointKind::kSelectiveOp);
  const TrainingResult rf = step(CheckpointKind::kFull);
  CHECK(rf.devices.front().peak_allocated < ro.devices.front().peak_allocated);
  CHECK(ro.devices.front().peak_allocated < rn.devices.front().peak_allocated);
  CHECK(rn.step_time < ro.step_time);
  CHECK(ro.step_time < rf.step_time);
}

TEST_CASE("selective-op is refused where torchtitan's policy would keep other tensors",
          "[training][checkpoint]") {
  const std::filesystem::path models = std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" /
                                       "models";
  const model::ModelSpec llama = model::load_model(kLlama8B, models);
  const model::ModelSpec moe = model::load_model("Qwen/Qwen3-30B-A3B", models);
  TrainingPlan ok = torchtitan_plan(CheckpointKind::kSelectiveOp);
  ValidationReport r;
  ok.validate(r);
  ok.validate_for_model(llama, r);
  CHECK(r.problems().empty());

  TrainingPlan tp = ok;
  tp.tp = 2;
  CHECK(refused(tp, llama, "tensor or context parallelism"));
  TrainingPlan cp = ok;
  cp.cp = 2;
  CHECK(refused(cp, llama, "tensor or context parallelism"));
  TrainingPlan eager = ok;
  eager.attention = Attention::kEager;
  CHECK(refused(eager, llama, "eager attention"));
  TrainingPlan megatron = ok;
  megatron.strategy = Strategy::kDdp;
  megatron.kernels = Kernels::kMegatron;
  CHECK(refused(megatron, llama, "Megatron-LM's kernels"));
  TrainingPlan deepspeed = ok;
  deepspeed.strategy = Strategy::kZero3;
  CHECK(refused(deepspeed, llama, "DeepSpeed or Megatron-LM"));
  TrainingPlan lora = ok;
  lora.lora.rank = 8;
  CHECK(refused(lora, llama, "LoRA"));
  CHECK(refused(ok, moe, "routed experts"));
}
