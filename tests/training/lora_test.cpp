// LoRA and QLoRA: the trainable set as PEFT counts it, the bytes bitsandbytes stores for a
// quantized base, and what LoRA changes in a simulated step (model state, backward, time).
#include "sim/training/lora.hpp"

#include <filesystem>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, kRoot / "scenarios" / "models");
}

TrainingPlan lora_plan(std::int64_t rank, std::vector<std::string> targets) {
  TrainingPlan p;
  p.num_gpus = 1;
  p.micro_batch = 1;
  p.seq_len = 1024;
  p.lora.rank = rank;
  p.lora.targets = std::move(targets);
  return p;
}

TrainingSetup make_setup(const std::string& model, const std::string& gpu, TrainingPlan plan) {
  TrainingSetup s{zoo(model), io::find_device(gpu, kRoot / "topologies"), plan, {}};
  s.links = default_cluster_links(s.device);
  return s;
}

bool has_problem(const ValidationReport& r, const std::string& field, const std::string& text) {
  for (const Problem& p : r.problems()) {
    if (p.field == field && p.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Llama-3.1-8B, r=16 on q_proj and v_proj: PEFT's 6,815,744 trainable parameters",
          "[training][lora][validation]") {
  // PEFT print_trainable_parameters() for Llama-3-8B shapes (q_proj 4096 -> 4096, v_proj
  // 4096 -> 1024, 32 layers; Llama-3.1-8B has the same) with LoraConfig(r=16,
  // target_modules=["q_proj", "v_proj"]): "trainable params: 6,815,744" (an executed
  // notebook's output, tests/validation/README.md section "PEFT's trainable parameters").
  const LoraParamCount c = count_lora_params(zoo("meta-llama/Llama-3.1-8B"),
                                             lora_plan(16, {"q_proj", "v_proj"}));
  CHECK(c.adapters == 6'815'744);
  CHECK(c.trainable == 6'815'744);
  // All params: the base's 8,030,261,248 (param_count.hpp) plus the adapters.
  CHECK(c.all == 8'030'261'248 + 6'815'744);
  CHECK(c.trainable_percent() == Approx(0.0848).margin(0.00005));
}

TEST_CASE("Llama-3.1-8B, r=16 on all-linear: 41,943,040 trainable parameters, by hand",
          "[training][lora]") {
  // Per layer r (in + out) for q 4096+4096, k and v 4096+1024, o 4096+4096, gate and up
  // 4096+14336, down 14336+4096: 16 x (8192 x 2 + 5120 x 2 + 18432 x 3) = 1,310,720; x 32.
  TrainingPlan p = lora_plan(16, {});
  p.lora.all_linear = true;
  CHECK(count_lora_params(zoo("meta-llama/Llama-3.1-8B"), p).trainable == 32 * 1'310'720);
  // Naming the seven modules is the same set.
  const TrainingPlan named = lora_plan(
      16, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"});
  CHECK(count_lora_params(zoo("meta-llama/Llama-3.1-8B"), named).trainable == 41'943'040);
}

TEST_CASE("trainable extras add the embedding, the lm_head and the norm weights",
          "[training][lora]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B");
  TrainingPlan p = lora_plan(16, {"q_proj", "v_proj"});
  p.lora.train_embeddings = true;
  CHECK(count_lora_params(spec, p).trainable == 6'815'744 + 128'256 * 4096);
  p.lora.train_lm_head = true;
  CHECK(count_lora_params(spec, p).trainable == 6'815'744 + 2 * 128'256 * 4096);
  p.lora.train_embeddings = p.lora.train_lm_head = false;
  p.lora.train_norms = true;  // two RMSNorm weights per layer and the final norm
  CHECK(count_lora_params(spec, p).trainable == 6'815'744 + (2 * 32 + 1) * 4096);
  // A tied lm_head (Llama-3.2-1B) is the embedding: training it trains the table once.
  const model::ModelSpec tied = zoo("meta-llama/Llama-3.2-1B");
  TrainingPlan t = lora_plan(16, {"q_proj"});
  t.lora.train_lm_head = true;
  t.lora.train_embeddings = true;
  CHECK(count_lora_params(tied, t).trainable ==
        count_lora_params(tied, lora_plan(16, {"q_proj"})).trainable + 128'256 * 2048);
}

TEST_CASE("NF4 with double quantization stores 4 bits plus 0.127 bit per weight",
          "[training][qlora]") {
  // QLoRA (arXiv:2305.14314, sec. 3): absmax per 64 weights as 8 bits plus one fp32 per 256
  // blocks, 8/64 + 32/(64 x 256) = 0.127 bit per parameter; 32/64 = 0.5 bit without.
  const std::int64_t n = 4096 * 4096;
  const Bytes dq = quantized_matrix_bytes(BaseQuant::kNf4, true, 4096, 4096);
  // packed 8,388,608 + absmax 262,144 + 1,024 fp32 scales + fp32 offset + 16-entry code.
  CHECK(dq == Bytes(8'388'608 + 262'144 + 4 * 1'024 + 4 + 64));
  const double overhead_bits = 8.0 * static_cast<double>(dq.count() - n / 2 - 64) /
                               static_cast<double>(n);
  CHECK(overhead_bits == Approx(0.127).margin(0.0005));
  const Bytes plain = quantized_matrix_bytes(BaseQuant::kNf4, false, 4096, 4096);
  CHECK(8.0 * static_cast<double>(plain.count() - n / 2 - 64) / static_cast<double>(n) ==
        Approx(0.5));
  CHECK(quantized_matrix_bytes(BaseQuant::kFp4, true, 4096, 4096) == dq);
  // LLM.int8(): one byte per weight and an fp32 scale per output row.
  CHECK(quantized_matrix_bytes(BaseQuant::kInt8, true, 4096, 1024) ==
        Bytes(4096 * 1024 + 4 * 1024));
}

TEST_CASE("LoRA keeps gradients and optimizer states for the adapters only",
          "[training][lora]") {
  TrainingSetup s = make_setup("meta-llama/Llama-3.1-8B", "h100-sxm",
                               lora_plan(16, {"q_proj", "v_proj"}));
  const std::vector<StagePlan> stages = plan_stages(s);
  REQUIRE(stages.size() == 1);
  const StagePlan& st = stages.front();
  constexpr std::int64_t kAdapters = 6'815'744;
  CHECK(st.trainable_params == kAdapters);
  // The frozen base in bf16: every weight of Llama-3.1-8B (weight_bytes.hpp: 16,060,522,496 B).
  CHECK(st.frozen_weights == Bytes(16'060'522'496));
  CHECK(st.state.params == Bytes(16'060'522'496 + 2 * kAdapters));
  CHECK(st.state.grads == Bytes(2 * kAdapters));
  CHECK(st.state.master == Bytes(4 * kAdapters));
  CHECK(st.state.optimizer == Bytes(8 * kAdapters));
}

TEST_CASE("a LoRA step is faster than full fine-tuning, QLoRA's dequantization slower again",
          "[training][lora][qlora]") {
  TrainingPlan full = lora_plan(0, {});
  TrainingPlan lora = lora_plan(16, {"q_proj", "v_proj"});
  TrainingPlan qlora = lora;
  qlora.base_quant = BaseQuant::kNf4;
  SimulationOptions o;
  o.record_timeline = false;
  const TrainingResult rf = simulate_training(make_setup("meta-llama/Llama-3.1-8B", "h100-sxm",
                                                         full), o);
  const TrainingResult rl = simulate_training(make_setup("meta-llama/Llama-3.1-8B", "h100-sxm",
                                                         lora), o);
  const TrainingResult rq = simulate_training(make_setup("meta-llama/Llama-3.1-8B", "h100-sxm",
                                                         qlora), o);
  // The step: no optimizer pass over 8 B parameters and no weight-gradient GEMMs for the base.
  CHECK(rl.step_time < rf.step_time);
  CHECK(rq.step_time > rl.step_time);
  // A decoder layer's backward loses its weight-gradient GEMMs (as many FLOPs as the forward's
  // matmuls) and gains the adapters' small GEMMs; the attention core's gradient and the
  // memory-bound kernels are unchanged, so it lands between half and three quarters.
  const BlockCosts& full_layer = rf.stages.front().chunks.front()[1];
  const BlockCosts& lora_layer = rl.stages.front().chunks.front()[1];
  REQUIRE(full_layer.layer == 0);
  REQUIRE(lora_layer.layer == 0);
  CHECK(lora_layer.backward.seconds() < 0.75 * full_layer.backward.seconds());
  CHECK(lora_layer.backward.seconds() > 0.5 * full_layer.backward.seconds());
  // What it lost is about one forward's matmuls: more than half the layer's forward.
  CHECK((full_layer.backward - lora_layer.backward).seconds() > 0.5 * full_layer.forward.seconds());
  CHECK(lora_layer.forward > full_layer.forward);  // the adapters' GEMMs come on top
  // QLoRA dequantizes the layer's weights in forward and again in backward.
  const BlockCosts& q_layer = rq.stages.front().chunks.front()[1];
  CHECK(q_layer.forward > lora_layer.forward);
  CHECK(q_layer.backward > lora_layer.backward);
  // 16 B per parameter (mixed-precision AdamW) of 8B parameters do not fit 80 GB; LoRA does.
  CHECK_FALSE(rf.fits);
  CHECK(rl.fits);
  CHECK(rq.devices.front().model_state < rl.devices.front().model_state);
}

TEST_CASE("QLoRA keeps the decoder linears in NF4 and the rest in bf16, byte for byte",
          "[training][qlora]") {
  TrainingPlan p = lora_plan(16, {"q_proj", "v_proj"});
  p.base_quant = BaseQuant::kNf4;
  const std::vector<StagePlan> stages =
      plan_stages(make_setup("meta-llama/Llama-3.1-8B", "rtx-4090", p));
  const auto q = [](std::int64_t in, std::int64_t out) {
    return quantized_matrix_bytes(BaseQuant::kNf4, true, in, out).count();
  };
  const std::int64_t layer = 2 * q(4096, 4096) + 2 * q(4096, 1024) + 2 * q(4096, 14336) +
                             q(14336, 4096);
  // embed_tokens and lm_head (128256 x 4096) and 65 RMSNorm weights stay bf16.
  const std::int64_t bf16 = 2 * (2 * 128'256 * 4096 + 65 * 4096);
  CHECK(stages.front().frozen_weights == Bytes(32 * layer + bf16));
  // About 5.7 GB: 4.13 bits for each of 6.98 B decoder weights (3.60 GB) plus the 2.10 GB of
  // bf16 embeddings.
  CHECK(stages.front().frozen_weights.gb() == Approx(5.70).margin(0.02));
}

TEST_CASE("a LoRA target the model does not have is named with the model's linears",
          "[training][lora]") {
  TrainingPlan p = lora_plan(16, {"q_proj", "qkv_proj"});
  ValidationReport r;
  p.validate(r);
  REQUIRE(r.ok());
  p.validate_for_model(zoo("meta-llama/Llama-3.1-8B"), r);
  CHECK(has_problem(r, "lora.targets", "'qkv_proj' is not a linear module"));
  CHECK(has_problem(r, "lora.targets", "q_proj, k_proj, v_proj, o_proj, gate_proj"));
  CHECK_FALSE(has_problem(r, "lora.targets", "'q_proj'"));
}

TEST_CASE("a quantized base without adapters, and bad LoRA numbers, are refused by field",
          "[training][lora]") {
  TrainingPlan p = lora_plan(0, {});
  p.base_quant = BaseQuant::kNf4;
  ValidationReport r;
  p.validate(r);
  CHECK(has_problem(r, "lora.base_quant", "needs LoRA adapters"));
  TrainingPlan bad = lora_plan(8, {"q_proj"});
  bad.lora.dropout = 1.0;
  bad.lora.alpha = 0.0;
  ValidationReport r2;
  bad.validate(r2);
  CHECK(has_problem(r2, "lora.dropout", "[0, 1)"));
  CHECK(has_problem(r2, "lora.alpha", "positive"));
}

TEST_CASE("LoRA off leaves the plan's stages as they were", "[training][lora][invariant]") {
  // Full-parameter training: everything is trainable, nothing is frozen.
  const std::vector<StagePlan> stages =
      plan_stages(make_setup("meta-llama/Llama-3.1-8B", "h100-sxm", lora_plan(0, {})));
  CHECK(stages.front().trainable_params == stages.front().num_params);
  CHECK(stages.front().frozen_weights == Bytes(0));
}
