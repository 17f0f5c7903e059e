// Issue 16, multi-LoRA in the budget: vLLM's stacked adapter slots on every device
// (vllm/lora/layers/base_linear.py, column_parallel_linear.py, row_parallel_linear.py) and its
// CPU adapter cache, against a hand count on Llama-3.1-8B in bf16.
//
// Llama-3.1-8B: hidden 4096, 32 query heads and 8 KV heads of 128, intermediate 14336, 32
// layers. One slot at rank 16 on one GPU, per layer (A elements + B elements):
//   qkv_proj      A 3 x 16 x 4096 = 196,608       B (4096 + 2 x 1024) x 16 =  98,304
//   o_proj        A 16 x 4096     =  65,536       B 4096 x 16              =  65,536
//   gate_up_proj  A 2 x 16 x 4096 = 131,072       B 2 x 14336 x 16         = 458,752
//   down_proj     A 16 x 14336    = 229,376       B 4096 x 16              =  65,536
//   together 1,310,720 elements; 4 slots x 2 B x 32 layers: 335,544,320 B (320 MiB).
// TP 2: q 2048, kv 512, intermediate 7168 per GPU; A of the column modules and B of the row
// modules stay whole: 475,136 + 409,600 = 884,736 elements, x 4 x 2 x 32 = 226,492,416 B.
// TP 2 fully sharded: column A at rank 8, row B at 2048 rows: 311,296 + 344,064 = 655,360
// elements, x 4 x 2 x 32 = 167,772,160 B.
// One adapter in the CPU cache (unsharded, rank 16): 1,310,720 x 2 x 32 = 83,886,080 B.
#include <cstdint>
#include <string>

#include "sim/core/error.hpp"
#include "sim/memory/budget.hpp"
#include "sim/memory/lora_memory.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/run/budget_run.hpp"
#include "tests/catch.hpp"

namespace vramsim {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

run::BudgetRequest llama8b_lora(std::int64_t tp) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.tp = tp;
  req.suggest = false;
  req.enable_lora = true;
  req.max_loras = 4;
  req.max_lora_rank = 16;
  return req;
}

std::string error_fields(const run::BudgetRequest& req) {
  try {
    run::answer_budget(req, kRoot);
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) out += (out.empty() ? "" : " ") + p.field;
    return out;
  }
  return "";
}

TEST_CASE("LoRA slots of Llama-3.1-8B match the hand count at TP 1 and TP 2", "[memory][lora]") {
  const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B-Instruct", kRoot / "scenarios" / "models");
  memory::LoraConfig cfg;
  cfg.max_loras = 4;
  cfg.max_lora_rank = 16;
  cfg.dtype = DType::kBf16;
  const memory::LoraLayerElements tp1 = memory::lora_slot_elements(spec, 1, cfg);
  CHECK(tp1.a == 622'592);
  CHECK(tp1.b == 688'128);
  CHECK(memory::lora_slot_bytes(spec, 1, cfg, 32) == Bytes(335'544'320));
  CHECK(memory::lora_slot_bytes(spec, 2, cfg, 32) == Bytes(226'492'416));
  cfg.fully_sharded = true;
  CHECK(memory::lora_slot_bytes(spec, 2, cfg, 32) == Bytes(167'772'160));
  // At TP 1 sharding changes nothing.
  CHECK(memory::lora_slot_bytes(spec, 1, cfg, 32) == Bytes(335'544'320));
  CHECK(memory::lora_adapter_bytes(spec, cfg) == Bytes(83'886'080));
}

TEST_CASE("LoRA slots shrink the KV cache by exactly their bytes on every device",
          "[memory][lora]") {
  for (const std::int64_t tp : {1, 2}) {
    run::BudgetRequest off = llama8b_lora(tp);
    off.enable_lora = false;
    off.max_loras = 1;
    const run::BudgetAnswer base = run::answer_budget(off, kRoot);
    const run::BudgetAnswer a = run::answer_budget(llama8b_lora(tp), kRoot);
    const Bytes expected(tp == 1 ? 335'544'320 : 226'492'416);
    REQUIRE(a.result.devices.size() == static_cast<std::size_t>(tp));
    for (std::size_t i = 0; i < a.result.devices.size(); ++i) {
      const memory::DeviceBudget& d0 = base.result.devices[i];
      const memory::DeviceBudget& d = a.result.devices[i];
      CHECK(d0.lora_weights == Bytes(0));
      CHECK(d.lora_weights == expected);
      CHECK(d0.kv_available - d.kv_available == expected);
      CHECK(d.activation_peak == d0.activation_peak);
    }
    const memory::DeviceBudget& d = a.result.devices.front();
    CHECK(a.result.num_gpu_blocks == d.kv_available / (d.page_bytes * d.layers_per_group));
    CHECK(a.result.num_gpu_blocks < base.result.num_gpu_blocks);
    // max_cpu_loras defaults to max_loras: four adapters of 80 MiB in host memory per device.
    CHECK(a.lora.adapter_bytes == Bytes(83'886'080));
    CHECK(a.lora.host_bytes_per_device == Bytes(4 * 83'886'080));
  }
}

TEST_CASE("bad LoRA settings are refused under their own names", "[memory][lora]") {
  run::BudgetRequest req = llama8b_lora(1);
  req.max_lora_rank = 24;
  CHECK(error_fields(req) == "engine.max_lora_rank");
  req = llama8b_lora(1);
  req.max_loras = 0;
  CHECK(error_fields(req) == "engine.max_loras");
  req = llama8b_lora(1);
  req.max_cpu_loras = 2;  // below max_loras 4
  CHECK(error_fields(req) == "engine.max_cpu_loras");
  req = llama8b_lora(1);
  req.lora_dtype = "fp8";
  CHECK(error_fields(req) == "engine.lora_dtype");
  req = llama8b_lora(2);
  req.fully_sharded_loras = true;
  req.max_lora_rank = 1;  // 1 does not split over 2 GPUs
  CHECK(error_fields(req) == "engine.fully_sharded_loras");
  req = llama8b_lora(1);
  req.enable_lora = false;  // --max-loras 4 without --enable-lora
  CHECK(error_fields(req) == "engine.max_loras");
  req = llama8b_lora(1);
  req.model_id = "mistralai/Mixtral-8x7B-v0.1";
  req.tp = 4;
  CHECK(error_fields(req) == "engine.enable_lora");
  CHECK(error_fields(llama8b_lora(1)).empty());
}

}  // namespace
}  // namespace vramsim
