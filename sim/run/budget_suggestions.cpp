#include "sim/run/budget_suggestions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/memory/budget.hpp"
#include "sim/model/weight_format.hpp"

namespace vramsim::run {

std::vector<Suggestion> budget_suggestions(const BudgetRequest& req, const BudgetAnswer& a) {
  std::vector<Suggestion> out;
  const auto attempt = [&](memory::EngineConfig cfg, std::string change, std::string why) {
    ValidationReport r;
    memory::validate(cfg, a.model, r);
    if (!r.ok()) return;
    const memory::BudgetResult res = memory::compute_budget(a.model, cfg, a.device, a.overheads);
    out.push_back({std::move(change), std::move(why), res.fits, res.num_gpu_blocks,
                   res.max_concurrency});
  };
  const memory::EngineConfig& e = a.engine;
  if (e.kv_cache_memory) {
    // The cache was given in bytes: the one change that matters is a size the devices hold.
    Bytes room = e.kv_cache_memory.value();
    for (const memory::DeviceBudget& x : a.result.devices) {
      room = std::min(room, x.total - (x.weights - x.weights_offloaded) - x.draft_weights -
                                x.activation_peak - x.non_torch - x.cuda_context - x.cuda_graph);
    }
    if (room > Bytes(0) && room < *e.kv_cache_memory) {
      memory::EngineConfig c = e;
      c.kv_cache_memory = room;
      attempt(c, fmt::format("--kv-cache-memory-bytes {}", room.count()),
              "the most every device holds beside weights, activations, non-torch memory, the "
              "CUDA context and graphs (no headroom left: leave some)");
    }
    return out;
  }
  const memory::DeviceBudget& d = a.result.devices.front();
  // 1. More of the device: vLLM needs only the CUDA context (and graphs) outside its share.
  const Bytes outside = d.cuda_context + (e.subtract_cuda_graph ? Bytes(0) : d.cuda_graph);
  const double safe =
      std::floor(100.0 * static_cast<double>((d.total - outside).count()) /
                 static_cast<double>(d.total.count())) / 100.0;
  if (safe > e.gpu_memory_utilization + 0.005) {
    memory::EngineConfig c = e;
    c.gpu_memory_utilization = std::min(safe, 0.99);
    attempt(c, fmt::format("--gpu-memory-utilization {:.2f}", c.gpu_memory_utilization),
            fmt::format("leaves {} outside vLLM's share, what the CUDA context and graphs need",
                        format_bytes(round_to_bytes(static_cast<double>(d.total.count()) *
                                                    (1.0 - c.gpu_memory_utilization)))));
  }
  // 2. A smaller profile batch: a smaller activation peak, at some prefill throughput.
  if (req.enable_chunked_prefill && e.max_num_batched_tokens > 2048) {
    memory::EngineConfig c = e;
    c.max_num_batched_tokens = 2048;
    attempt(c, "--max-num-batched-tokens 2048",
            "a smaller profile batch (vLLM's default on smaller GPUs): a smaller activation "
            "peak, longer prompts take more steps");
  }
  if (e.max_num_seqs > 128) {
    memory::EngineConfig c = e;
    c.max_num_seqs = 128;
    attempt(c, "--max-num-seqs 128",
            "fewer sampler rows in the profile run, at most 128 requests per step");
  }
  // 3. Fewer bytes per token or per weight, where the device runs fp8.
  const bool fp8 = hardware::supports_natively(a.device, DType::kFp8);
  if (fp8 && e.kv_cache_dtype != DType::kFp8) {
    memory::EngineConfig c = e;
    c.kv_cache_dtype = DType::kFp8;
    attempt(c, "--kv-cache-dtype fp8", "one byte per KV element: about twice the tokens");
  }
  if (e.weights.quantization == model::QuantMethod::kNone) {
    if (fp8) {
      memory::EngineConfig c = e;
      c.weights = model::make_weight_format(e.dtype, "fp8");
      attempt(c, "--quantization fp8", "fp8 weights (online quantization): about half the bytes");
    }
    memory::EngineConfig c = e;
    c.weights = model::make_weight_format(e.dtype, "awq");
    attempt(c, "--quantization awq",
            "4-bit weights: needs an AWQ checkpoint of the model (give its config.json)");
  }
  return out;
}

}  // namespace vramsim::run
