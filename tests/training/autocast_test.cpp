// bf16-amp: PyTorch autocast over an fp32 model (Hugging Face Trainer's --bf16 on fp32 weights,
// accelerate's mixed_precision "bf16") under DDP: fp32 parameters, gradients and AdamW states,
// and bf16 copies of the matmul weights from their forward to their backward. Hugging Face's
// "Anatomy of Model's Memory" (huggingface/transformers docs/source/en/model_memory_anatomy.md)
// counts it as "18 bytes per model parameter": 6 for the weights ("a model in fp32 and one in
// fp16/bf16"), 8 for AdamW, 4 for the fp32 gradients.
#include "sim/training/model_state.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

// Llama-3.2-1B: 1,235,814,400 parameters, 262,668,288 of them the embedding, tied to the head.
constexpr std::int64_t kParams = 1'235'814'400;
constexpr std::int64_t kEmbedding = 128'256LL * 2'048;

TrainingPlan one_gpu(Precision p, CheckpointKind ckpt) {
  TrainingPlan plan;
  plan.num_gpus = 1;
  plan.precision = p;
  plan.checkpointing = Checkpointing{ckpt, 1};
  plan.seq_len = 1024;
  return plan;
}

TrainingResult simulate(const TrainingPlan& p) {
  return simulate_training(testing::zoo_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                           {.num_steps = 1, .record_timeline = false});
}

}  // namespace

TEST_CASE("bf16-amp keeps fp32 parameters, gradients and AdamW states: with the bf16 weight "
          "copies, Hugging Face's 18 bytes per parameter",
          "[training][autocast]") {
  const BytesPerParam b = bytes_per_param(Precision::kBf16Amp, Optimizer::kAdamW);
  CHECK(b.params == 4);
  CHECK(b.grads == 4);
  CHECK(b.master == 0);
  CHECK(b.optimizer == 8);
  CHECK(b.total() + 2 == 18);  // + the bf16 copy autocast makes of each weight

  // Full recompute: every layer's copy stays cached until the forward ends, so at its end the
  // device holds 16 B of state and 2 B of copies per parameter (the embedding's weight once, as
  // the tied head's operand; the norms' weights are cast too, a rounding here).
  const TrainingResult amp = simulate(one_gpu(Precision::kBf16Amp, CheckpointKind::kFull));
  const DeviceResult& d = amp.devices.front();
  CHECK(d.model_state == Bytes(16 * kParams));
  CHECK(d.peak_allocated >= Bytes(16 * kParams + 2 * kParams));
  // bf16-mixed holds the same 16 B in another split (2 + 2 + 4 + 8) and no copies.
  const TrainingResult mixed = simulate(one_gpu(Precision::kBf16Mixed, CheckpointKind::kFull));
  CHECK(mixed.devices.front().model_state == Bytes(16 * kParams));
  CHECK(mixed.devices.front().peak_allocated < Bytes(16 * kParams + 2 * kParams));
}

TEST_CASE("bf16-amp's weight copies are saved for backward, or cached through the forward and "
          "made again by the recompute",
          "[training][autocast]") {
  for (const CheckpointKind ckpt : {CheckpointKind::kNone, CheckpointKind::kFull}) {
    CAPTURE(static_cast<int>(ckpt));
    const StagePlan amp = plan_stages(testing::zoo_setup(
        "meta-llama/Llama-3.2-1B", "h100-sxm", one_gpu(Precision::kBf16Amp, ckpt))).front();
    const StagePlan mixed = plan_stages(testing::zoo_setup(
        "meta-llama/Llama-3.2-1B", "h100-sxm", one_gpu(Precision::kBf16Mixed, ckpt))).front();
    const std::vector<BlockCosts>& a = amp.chunks.front();
    const std::vector<BlockCosts>& m = mixed.chunks.front();
    REQUIRE(a.size() == m.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(a[i].layer);
      // The embedding is a lookup: nothing cast. The head multiplies by the tied embedding.
      const std::int64_t cast =
          i == 0 ? 0 : 2 * (a[i].layer < 0 ? a[i].num_params + kEmbedding : a[i].num_params);
      const bool recomputed = ckpt == CheckpointKind::kFull && a[i].layer >= 0;
      CHECK(a[i].stored - m[i].stored == Bytes(recomputed ? 0 : cast));
      CHECK(a[i].rematerialized - m[i].rematerialized == Bytes(recomputed ? cast : 0));
      CHECK(a[i].autocast_cache == Bytes(recomputed ? cast : 0));
      // Casting reads 4 B and writes 2 B per element, a memory-bound pass in every forward.
      CHECK((a[i].forward > m[i].forward) == (cast > 0));
    }
  }
}

TEST_CASE("bf16-amp is refused where frameworks cast their own way", "[training][autocast]") {
  const auto problems = [](const TrainingPlan& p) {
    ValidationReport r;
    p.validate(r);
    std::string all;
    for (const Problem& x : r.problems()) all += x.field + ": " + x.message + "\n";
    return all;
  };
  TrainingPlan fsdp = one_gpu(Precision::kBf16Amp, CheckpointKind::kNone);
  fsdp.num_gpus = 8;
  fsdp.strategy = Strategy::kFsdpFull;
  CHECK_THAT(problems(fsdp), Catch::Contains("memory.precision: bf16-amp"));
  TrainingPlan megatron = one_gpu(Precision::kBf16Amp, CheckpointKind::kNone);
  megatron.kernels = Kernels::kMegatron;
  CHECK_THAT(problems(megatron), Catch::Contains("Megatron-LM keeps bf16 parameters"));
  TrainingPlan lora = one_gpu(Precision::kBf16Amp, CheckpointKind::kNone);
  lora.lora.rank = 16;
  CHECK_THAT(problems(lora), Catch::Contains("bf16-amp with LoRA"));
  CHECK(problems(one_gpu(Precision::kBf16Amp, CheckpointKind::kNone)).empty());
}
