#include "sim/run/budget_run.hpp"

#include "sim/cost/profile_for_device.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/memory/calibrated_overheads.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/model/model_zoo.hpp"

namespace vramsim::run {

std::int64_t default_max_num_batched_tokens(const hardware::DeviceSpec& device) {
  const bool big = device.memory_total >= GiB(70) && device.id.rfind("a100", 0) != 0;
  return big ? 8192 : 2048;
}

std::int64_t default_max_num_seqs(const hardware::DeviceSpec& device) {
  const bool big = device.memory_total >= GiB(70) && device.id.rfind("a100", 0) != 0;
  return big ? 1024 : 256;
}

namespace {

bool has_switch_fabric(const hardware::DeviceSpec& d) {
  return d.peer_link.has_value() && !d.peer_link->bridge_only;
}

// vLLM's --dtype auto: the checkpoint's 16-bit type; fp32 (or unstated) checkpoints run in
// bf16; bf16 becomes fp16 on parts without bf16 (vllm/config/model.py _resolve_auto_dtype).
DType resolve_dtype(const std::string& text, const model::ModelSpec& spec,
                    const hardware::DeviceSpec& device, std::vector<std::string>& notes,
                    ValidationReport& report) {
  DType d = DType::kBf16;
  if (text == "auto") {
    if (spec.checkpoint_dtype == DType::kFp16 || spec.checkpoint_dtype == DType::kBf16) {
      d = *spec.checkpoint_dtype;
    } else {
      notes.push_back("dtype auto: the checkpoint is not stored in 16 bits; running in bf16 "
                      "as vLLM does");
    }
    if (d == DType::kBf16 && !hardware::supports_natively(device, DType::kBf16)) {
      d = DType::kFp16;
      notes.push_back(fmt::format("dtype auto: {} has no bf16; vLLM casts to fp16", device.id));
    }
    return d;
  }
  const auto parsed = dtype_from_string(text);
  if (!parsed || !(*parsed == DType::kBf16 || *parsed == DType::kFp16 || *parsed == DType::kFp32)) {
    report.error("engine.dtype", fmt::format("expected auto, bf16, fp16 or fp32, got '{}'", text));
    return d;
  }
  return *parsed;
}

DType resolve_kv_dtype(const std::string& text, DType dtype, ValidationReport& report) {
  if (text == "auto") return dtype;
  const auto parsed = dtype_from_string(text);
  if (!parsed || *parsed == DType::kInt8 || *parsed == DType::kInt4) {
    report.error("engine.kv_cache_dtype",
                 fmt::format("expected auto, bf16, fp16, fp32 or fp8, got '{}'", text));
    return dtype;
  }
  return *parsed;
}

memory::EngineConfig resolve_engine(const BudgetRequest& req, const model::ModelSpec& spec,
                                    const hardware::DeviceSpec& device,
                                    std::vector<std::string>& notes) {
  ValidationReport report;
  memory::EngineConfig cfg;
  cfg.tp = static_cast<int>(std::clamp<std::int64_t>(req.tp, -1, 1 << 20));
  cfg.pp = static_cast<int>(std::clamp<std::int64_t>(req.pp, -1, 1 << 20));
  if (req.tp < 1 || req.tp > 4096) report.error("engine.tp", fmt::format("must be in [1, 4096], got {}", req.tp));
  if (req.pp < 1 || req.pp > 4096) report.error("engine.pp", fmt::format("must be in [1, 4096], got {}", req.pp));
  cfg.dtype = resolve_dtype(req.dtype, spec, device, notes, report);
  cfg.kv_cache_dtype = resolve_kv_dtype(req.kv_cache_dtype, cfg.dtype, report);
  std::string quant = req.quantization;
  if ((quant == "none" || quant.empty()) && !spec.checkpoint_quantization.empty()) {
    quant = spec.checkpoint_quantization;
    notes.push_back(fmt::format("quantization: the checkpoint is stored as {}", quant));
  }
  try {
    cfg.weights = model::make_weight_format(cfg.dtype, quant, spec);
  } catch (const ConfigError& e) {
    // A conflict with the checkpoint names its quantization_config key and file, not the flag.
    for (Problem p : e.report().problems()) {
      report.error(p.field == "quantization" ? "engine.quantization" : p.field, p.message,
                   p.where);
    }
  }
  cfg.max_model_len = req.max_model_len;
  if (cfg.max_model_len == 0) {
    cfg.max_model_len = spec.max_position_embeddings;
    if (cfg.max_model_len == 0) {
      report.error("engine.max_model_len", "required: the model's config.json gives no "
                                      "max_position_embeddings");
    }
  }
  cfg.max_num_seqs = req.max_num_seqs != 0 ? req.max_num_seqs : default_max_num_seqs(device);
  cfg.max_num_batched_tokens = req.max_num_batched_tokens != 0
                                   ? req.max_num_batched_tokens
                                   : default_max_num_batched_tokens(device);
  if (!req.enable_chunked_prefill && cfg.max_num_batched_tokens < cfg.max_model_len) {
    // vLLM without chunked prefill: one step must hold a whole prompt, so the token budget, and
    // the profile run that sizes the KV cache with it, is max(max_num_batched_tokens,
    // max_model_len) (SchedulerConfig; issue 12's audit of the start-up logs).
    notes.push_back(fmt::format("chunked prefill off: max_num_batched_tokens {} -> max_model_len "
                                "{} (a step holds a whole prompt; the profile run uses it too)",
                                cfg.max_num_batched_tokens, cfg.max_model_len));
    cfg.max_num_batched_tokens = cfg.max_model_len;
  }
  cfg.gpu_memory_utilization = req.gpu_memory_utilization;
  cfg.block_size = req.block_size;
  if (req.num_gpu_blocks != 0) cfg.num_gpu_blocks_override = req.num_gpu_blocks;
  cfg.enforce_eager = req.enforce_eager;
  cfg.subtract_cuda_graph = req.subtract_cuda_graph;
  if (report.ok()) memory::validate(cfg, spec, report);
  throw_if_errors(report);
  return cfg;
}

Alternative try_config(const model::ModelSpec& spec, memory::EngineConfig cfg,
                       const hardware::DeviceSpec& device, int tp) {
  Alternative alt;
  alt.gpu_id = device.id;
  alt.tp = tp;
  alt.pp = cfg.pp;
  cfg.tp = tp;
  ValidationReport r;
  memory::validate(cfg, spec, r);
  if (!r.ok()) return alt;  // this split is impossible for the model: not a candidate
  const memory::BudgetResult res = memory::compute_budget(
      spec, cfg, device, memory::default_overheads(has_switch_fabric(device)));
  alt.fits = res.fits;
  alt.num_gpu_blocks = res.num_gpu_blocks;
  alt.max_concurrency = res.max_concurrency;
  return alt;
}

}  // namespace

BudgetAnswer answer_budget(const BudgetRequest& req, const std::filesystem::path& root) {
  BudgetAnswer a;
  a.seed = req.seed;
  a.model = model::load_model(req.model_id, root / "scenarios" / "models");
  const std::filesystem::path topo = root / "topologies";
  a.device = io::find_device(req.gpu_id, topo, "hardware.gpu");
  a.engine = resolve_engine(req, a.model, a.device, a.notes);
  a.overheads = memory::default_overheads(has_switch_fabric(a.device));
  if (!req.calibration.empty()) {
    a.calibration = cost::load_profile_for_device(req.calibration, a.device, "hardware.calibration");
    a.overheads = memory::overheads_from_profile(*a.calibration, has_switch_fabric(a.device));
  }
  a.result = memory::compute_budget(a.model, a.engine, a.device, a.overheads);
  if (a.result.fits || !req.suggest) return a;

  for (int tp : {2, 4, 8, 16}) {
    if (tp <= a.engine.tp) continue;
    Alternative alt = try_config(a.model, a.engine, a.device, tp);
    if (alt.fits) {
      a.larger_tp.push_back(alt);
      break;
    }
  }
  for (const std::string& id : io::device_ids(topo)) {
    if (id == a.device.id) continue;
    const hardware::DeviceSpec other = io::find_device(id, topo);
    memory::EngineConfig cfg = a.engine;
    if (req.max_num_seqs == 0) cfg.max_num_seqs = default_max_num_seqs(other);
    if (req.max_num_batched_tokens == 0) {
      cfg.max_num_batched_tokens = default_max_num_batched_tokens(other);
    }
    Alternative alt = try_config(a.model, cfg, other, a.engine.tp);
    if (alt.fits) a.other_gpus.push_back(alt);
  }
  std::stable_sort(a.other_gpus.begin(), a.other_gpus.end(),
                   [](const Alternative& x, const Alternative& y) {
                     return x.max_concurrency > y.max_concurrency;
                   });
  return a;
}

}  // namespace vramsim::run
