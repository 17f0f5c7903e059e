// Per-layer activation bytes against Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models" (arXiv:2205.05198), Table 2, for their GPT-3 175B shapes
// (h = 12288, a = 96, s = 2048, L = 96, t = 8, b = 1). With sbh = 2048 * 12288 = 25,165,824 and
// 5as/h = 5 * 96 * 2048 / 12288 = 80:
#include "sim/training/activation_memory.hpp"

#include "sim/model/model_zoo.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {
constexpr KorthikantiShape kGpt3{.s = 2048, .b = 1, .h = 12288, .a = 96, .t = 8};
constexpr std::int64_t kLayers = 96;

model::ModelSpec llama_8b() {
  return model::load_model("meta-llama/Llama-3.1-8B",
                           std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models");
}
}  // namespace

TEST_CASE("GPT-3 175B activations per layer follow Korthikanti et al. Table 2",
          "[training][activations][validation]") {
  using V = KorthikantiVariant;
  // sbh (34 + 80) = 114 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kNoParallelism) == Bytes(2'868'903'936));
  // sbh (10 + 24/8 + 80/8) = 23 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kTensorParallel) == Bytes(578'813'952));
  // sbh (34/8 + 80/8) = 14.25 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kTensorSequenceParallel) == Bytes(358'612'992));
  // sbh (10 + 24/8) = 13 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kTensorParallelSelective) == Bytes(327'155'712));
  // sbh (34/8) = 4.25 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kTensorSequenceParallelSelective) == Bytes(106'954'752));
  // 2 sbh
  CHECK(korthikanti_layer_bytes(kGpt3, V::kFullRecompute) == Bytes(50'331'648));
}

TEST_CASE("GPT-3 175B: TP+SP with selective recompute needs 4.25 sbh L, about 10 GB",
          "[training][activations][validation]") {
  // Korthikanti et al. sec. 5: sequence parallelism plus selective recompute cuts the activation
  // memory per GPU by about 5x relative to tensor parallelism alone (23 / 4.25 = 5.4).
  const Bytes tp = kLayers * korthikanti_layer_bytes(kGpt3, KorthikantiVariant::kTensorParallel);
  const Bytes best = kLayers * korthikanti_layer_bytes(
                                   kGpt3, KorthikantiVariant::kTensorSequenceParallelSelective);
  CHECK(best == Bytes(10'267'656'192));
  CHECK(static_cast<double>(tp.count()) / static_cast<double>(best.count()) == Approx(23.0 / 4.25));
}

TEST_CASE("the shape-adapted layer of Llama-3.1-8B counts GQA, SwiGLU and flash attention",
          "[training][activations]") {
  const model::ModelSpec spec = llama_8b();
  // h = 4096, q = 4096, kv = 1024, I = 14336, 32 heads; s = 4096, b = 1, bf16.
  const LayerActivations a = layer_activations(spec, {.seq_len = 4096, .micro_batch = 1});
  const std::int64_t sb = 4096;
  const std::int64_t expected_none =
      2 * sb * (4 * 4096 + (4096 + 2 * 1024) + 4096 + 4 * 14336) + 4 * sb * 32;
  CHECK(a.stored_none == Bytes(expected_none));
  // Selective recompute re-runs the attention core (drops its LSE) and keeps its output, the
  // o_proj input (Korthikanti et al. 2022, sec. 5: the 11 sbh of attention minus the core).
  CHECK(a.stored_selective == Bytes(expected_none - 4 * sb * 32));
  CHECK(a.stored_full == Bytes(2 * sb * 4096));
}

TEST_CASE("sequence parallelism splits the residual-width terms by t", "[training][activations]") {
  const model::ModelSpec spec = llama_8b();
  const LayerActivations tp = layer_activations(spec, {.seq_len = 4096, .tp = 4});
  const LayerActivations sp =
      layer_activations(spec, {.seq_len = 4096, .tp = 4, .sequence_parallel = true});
  CHECK(tp.stored_none - sp.stored_none == Bytes(4 * 2 * 4096 * (4096 - 1024)));
  CHECK(sp.stored_full == Bytes(2 * 4096 * 1024));
}

TEST_CASE("more checkpointing never keeps more activations per layer",
          "[training][activations][invariant]") {
  const LayerActivations a = layer_activations(llama_8b(), {.seq_len = 2048, .micro_batch = 2});
  CHECK(a.stored_full < a.stored_selective);
  CHECK(a.stored_selective < a.stored_none);
  Bytes previous(0);
  for (int k : {1, 2, 4, 8}) {  // every:1 = full ... every:8 keeps the most
    Bytes total(0);
    for (std::int64_t layer = 0; layer < 32; ++layer) {
      total += stored_activation_bytes(a, {CheckpointKind::kEveryK, k}, layer);
    }
    CHECK(total > previous);
    previous = total;
  }
}

TEST_CASE("eager attention stores the s x s probabilities that flash attention avoids",
          "[training][activations]") {
  const model::ModelSpec spec = llama_8b();
  const LayerActivations flash = layer_activations(spec, {.seq_len = 1024});
  const LayerActivations eager =
      layer_activations(spec, {.seq_len = 1024, .flash_attention = false});
  CHECK(eager.stored_none - flash.stored_none == Bytes(2 * 32 * 1024 * 1024 - 4 * 1024 * 32));
}

TEST_CASE("a mixture-of-experts layer keeps its k experts' inner tensors and the token copies",
          "[training][activations][moe]") {
  // Qwen3-30B-A3B: h = 2048, 32 heads of 128, 4 KV heads, 128 experts, top-8, expert width 768,
  // no shared expert. s = 1024, b = 1, bf16.
  const model::ModelSpec spec = model::load_model(
      "Qwen/Qwen3-30B-A3B", std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models");
  REQUIRE(spec.is_moe());
  const std::int64_t sb = 1024;
  const LayerActivations a = layer_activations(spec, {.seq_len = 1024}, /*moe_layer=*/true);
  const std::int64_t attention = 2 * sb * (4 * 2048 + (4096 + 2 * 512) + 4096) + 4 * sb * 32;
  const std::int64_t experts = 2 * sb * 4 * 8 * 768     // gate, up, act, act*up of 8 experts
                               + 2 * 2 * sb * 8 * 2048  // dispatched copies and expert outputs
                               + 4 * sb * 128;          // fp32 router probabilities
  CHECK(a.stored_none == Bytes(attention + experts));
  CHECK(a.stored_full == Bytes(2 * sb * 2048));
}

TEST_CASE("a Megatron GPT layer with dropout and eager attention keeps exactly Table 2's bytes",
          "[training][activations][validation][megatron]") {
  // Korthikanti et al. 2022, Table 2 (sec. 4.1-4.2 and 5): the 175B GPT of Table 3 (h 12288,
  // 96 heads, LayerNorm, GeLU MLP of 4h, learned positions), s 2048, b 1, t 8, 16-bit
  // activations and 1-byte dropout masks: 34 sbh + 5 a s^2 b per layer, split by t as the
  // paper splits it.
  const model::ModelSpec gpt = model::load_model(
      (std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "validation" / "models" /
       "megatron-gpt-175b.json")
          .string(),
      std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models");
  using V = KorthikantiVariant;
  const auto shape = [](int t, bool sp) {
    return ActivationShape{.seq_len = 2048, .micro_batch = 1, .tp = t, .sequence_parallel = sp,
                           .flash_attention = false, .element_bytes = 2, .dropout = true};
  };
  KorthikantiShape one = kGpt3;
  one.t = 1;
  const LayerActivations single = layer_activations(gpt, shape(1, false));
  const LayerActivations tp = layer_activations(gpt, shape(8, false));
  const LayerActivations tsp = layer_activations(gpt, shape(8, true));
  CHECK(single.stored_none == korthikanti_layer_bytes(one, V::kNoParallelism));
  CHECK(tp.stored_none == korthikanti_layer_bytes(kGpt3, V::kTensorParallel));
  CHECK(tsp.stored_none == korthikanti_layer_bytes(kGpt3, V::kTensorSequenceParallel));
  CHECK(tp.stored_selective == korthikanti_layer_bytes(kGpt3, V::kTensorParallelSelective));
  CHECK(tsp.stored_selective ==
        korthikanti_layer_bytes(kGpt3, V::kTensorSequenceParallelSelective));
  CHECK(single.stored_full == korthikanti_layer_bytes(one, V::kFullRecompute));
}
