// vLLM's "model weights" figure is torch.cuda.memory_allocated after the model is built, so it
// counts PyTorch's caching-allocator blocks, not the tensors' bytes (sim/memory/budget.cpp,
// allocated_weight_bytes). Hand-computed against the logs of tests/validation/
// vllm_startup_logs.csv.
#include <cmath>
#include <string>

#include "sim/memory/budget.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/weight_bytes.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {

// NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on the SXM5 part.
constexpr int kH100Sms = 132;

model::ModelSpec load(const std::string& id_or_path) {
  return model::load_model(id_or_path, std::string(VRAMSIM_SOURCE_ROOT) + "/scenarios/models");
}

memory::RuntimeOverheads no_overheads() {
  memory::RuntimeOverheads o;
  o.source = "test";
  return o;
}

Bytes weights_at(const model::ModelSpec& spec, int tp, std::int64_t max_model_len) {
  memory::EngineConfig c;
  c.tp = tp;
  c.max_model_len = max_model_len;
  c.weights = model::make_weight_format(DType::kBf16, "none");
  const memory::BudgetResult r = memory::compute_budget(spec, c, GiB(80), kH100Sms,
                                                        no_overheads());
  return r.devices.front().weights;
}

double gib(Bytes b) { return static_cast<double>(b.count()) / (1 << 30); }

}  // namespace

TEST_CASE("Qwen2.5-72B at TP 2 holds 1 MiB more per layer than its tensors, as vLLM 0.19 logs",
          "[memory][budget][weights]") {
  const model::ModelSpec spec = load("Qwen/Qwen2.5-72B-Instruct");
  // One TP rank, bf16 (hidden 8192, 80 layers, 64 query / 8 KV heads of 128, intermediate
  // 29,568, vocabulary 152,064, untied, 32,768 positions):
  //   embed_tokens, lm_head  76,032 x 8192 x 2 B = 1188 MiB each, whole 2 MiB multiples
  //   per layer  qkv_proj 5120 x 8192 x 2 B = 80 MiB, its bias 10,240 B, o_proj 64 MiB,
  //              gate_up_proj 462 MiB, two norms 16,384 B each: blocks of exactly their size
  //              down_proj 14,784 x 8192 x 2 B = 242,221,056 B = 231 MiB: its 232 MiB
  //              segment is not split (1 MiB left is not more than kSmallSize), 1 MiB more
  //   tensors  2 x 1,245,708,288 + 80 x 877,701,120 + final norm 16,384
  //            + rotary cache 32,768 x 128 x 2 B                      = 72,715,911,168
  //   blocks   + 80 x 1,048,576                                       = 72,799,797,248
  //            = 67.80 GiB, the log's "weights memory: 67.80GiB" (67.72 counting tensors)
  memory::EngineConfig c;
  c.tp = 2;
  c.max_model_len = 8192;
  c.weights = model::make_weight_format(DType::kBf16, "none");
  const Bytes tensors =
      model::weight_bytes_on_stage(spec, c.weights, model::Parallelism{2, 1}, 0) +
      Bytes(32'768LL * 128 * 2);
  CHECK(tensors == Bytes(72'715'911'168));
  const Bytes weights = weights_at(spec, 2, 8192);
  CHECK(weights == Bytes(72'799'797'248));
  CHECK(weights - tensors == 80 * MiB(1));
}

TEST_CASE("Llama-3.1-8B's parameters fill their blocks exactly: 14.9889 GiB as vLLM logs",
          "[memory][budget][weights]") {
  // Every parameter of Llama-3.1-8B at TP 1 is a whole number of 2 MiB segments (qkv_proj
  // 48 MiB, o_proj 32, gate_up_proj 224, down_proj 112, embed_tokens and lm_head 1002 MiB)
  // or a small-pool block of its own size (norms, 8 KiB): blocks = tensors,
  // 16,060,522,496 B + the 32 MiB rotary cache = 16,094,076,928 B = 14.9889 GiB
  // ("Model loading took 14.9889 GiB", vllm-project/vllm PR #17122's log).
  const Bytes weights = weights_at(load("meta-llama/Llama-3.1-8B-Instruct"), 1, 8192);
  CHECK(weights == Bytes(16'094'076'928));
}

TEST_CASE("Qwen2-7B-Instruct's weights as vLLM 0.10.1.1 logs them at TP 1 and TP 2",
          "[memory][budget][weights]") {
  // dennislee22/vLLM-benchmarking's A100 logs (tests/validation/vllm_startup_logs.csv):
  // "Model loading took 14.2488 GiB" at TP 1, "7.1217 GiB" at TP 2.
  const model::ModelSpec spec = load(std::string(VRAMSIM_SOURCE_ROOT) +
                                     "/tests/validation/models/Qwen__Qwen2-7B-Instruct.json");
  // TP 1 (hidden 3584, 28 layers, 28 query / 4 KV heads of 128, intermediate 18,944):
  //   embed_tokens, lm_head 1039.5 MiB each -> 1040 MiB blocks           2 x 1,090,519,040
  //   per layer  qkv_proj 31.5 MiB -> 32 MiB (0.5 left, not split)           33,554,432
  //              its bias 4608 x 2 B                                                9,216
  //              o_proj 24.5 MiB: a 26 MiB segment split (1.5 MiB left)       25,690,112
  //              gate_up_proj 259 MiB -> 260 MiB                              272,629,760
  //              down_proj 129.5 MiB -> 130 MiB                               136,314,880
  //              two norms                                                         14,336
  //   28 x 468,212,736 + final norm 7,168 + rotary 32,768 x 128 x 2 B = 8,388,608
  //   = 15,299,390,464 B = 14.2487 GiB
  const Bytes tp1 = weights_at(spec, 1, 16384);
  CHECK(tp1 == Bytes(15'299'390'464));
  // NOTE: 14.2488 as logged is at least 14.24875 GiB, 88,351 B more: the attention layers'
  // fp32 scale scalars (_k_scale, _v_scale, _q_scale, _prob_scale, a 512 B block each, 28 x
  // 2 KiB = 57,344 B of it) are not counted, nor any other tensor of a few KiB.
  CHECK(std::abs(gib(tp1) - 14.2488) < 1.5e-4);
  // TP 2: embed_tokens, lm_head 519.75 MiB -> 520; per layer qkv_proj 15.75 MiB -> 16, bias
  // 4608 B, o_proj 12.25 MiB (split), gate_up_proj 129.5 -> 130, down_proj 64.75 MiB (split),
  // norms: 2 x 545,259,520 + 28 x 233,851,392 + 7,168 + 8,388,608 = 7,646,753,792 B
  // = 7.12159 GiB, 59,669 B under the log's 7.1217 (the scale scalars again).
  const Bytes tp2 = weights_at(spec, 2, 16384);
  CHECK(tp2 == Bytes(7'646'753'792));
  CHECK(std::abs(gib(tp2) - 7.1217) < 1.5e-4);
}
