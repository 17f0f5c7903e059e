#include "sim/run/budget_dtype.hpp"

#include <fmt/format.h>

#include <utility>

namespace vramsim::run {

namespace {

// Model types vLLM will not run in float16 (vllm/config/model.py,
// _FLOAT16_NOT_SUPPORTED_MODELS: "Numerical instability. Please use bfloat16 or float32
// instead."); of the families read here, Gemma 2 and Gemma 3.
bool float16_refused(model::ModelFamily f) {
  return f == model::ModelFamily::kGemma2 || f == model::ModelFamily::kGemma3Text ||
         f == model::ModelFamily::kGemma3;
}

}  // namespace

DType resolve_dtype(const std::string& text, const model::ModelSpec& spec,
                    const hardware::DeviceSpec& device, std::vector<std::string>& notes,
                    ValidationReport& report) {
  DType d = DType::kBf16;
  const bool no_fp16 = float16_refused(spec.family);
  if (text == "auto") {
    if (spec.checkpoint_dtype == DType::kFp16 || spec.checkpoint_dtype == DType::kBf16) {
      d = *spec.checkpoint_dtype;
    } else {
      notes.push_back("dtype auto: the checkpoint is not stored in 16 bits; running in bf16 "
                      "as vLLM does");
    }
    const bool bf16 = hardware::supports_natively(device, DType::kBf16);
    // vLLM's _resolve_auto_dtype: the first of the platform's dtypes the model type allows
    // (bf16, fp16, fp32 from compute capability 8.0; fp16, fp32 below) when the checkpoint's
    // is not among them.
    if (d == DType::kBf16 && !bf16) {
      d = no_fp16 ? DType::kFp32 : DType::kFp16;
      notes.push_back(fmt::format("dtype auto: {} has no bf16; vLLM casts to {}", device.id,
                                  no_fp16 ? fmt::format("fp32 ({} does not run in fp16)",
                                                        to_string(spec.family))
                                          : std::string("fp16")));
    } else if (d == DType::kFp16 && no_fp16) {
      d = bf16 ? DType::kBf16 : DType::kFp32;
      notes.push_back(fmt::format("dtype auto: {} does not run in fp16 in vLLM; {}",
                                  to_string(spec.family), bf16 ? "bf16" : "fp32"));
    }
    return d;
  }
  const auto parsed = dtype_from_string(text);
  if (!parsed || !(*parsed == DType::kBf16 || *parsed == DType::kFp16 || *parsed == DType::kFp32)) {
    report.error("engine.dtype", fmt::format("expected auto, bf16, fp16 or fp32, got '{}'", text));
    return d;
  }
  if (*parsed == DType::kBf16 && !hardware::supports_natively(device, DType::kBf16)) {
    // vLLM refuses an explicit bfloat16 on such a part at start-up ("Bfloat16 is only supported
    // on GPUs with compute capability of at least 8.0", vllm/platforms/cuda.py
    // check_if_supports_dtype); only --dtype auto casts to fp16.
    report.error("engine.dtype",
                 fmt::format("bf16 on {} (hardware.gpu), which has no bf16: vLLM refuses this "
                             "combination at start-up; use --dtype fp16 or auto",
                             device.id));
  }
  if (*parsed == DType::kFp16 && no_fp16) {
    report.error("engine.dtype",
                 fmt::format("the model type '{}' does not support float16 in vLLM (numerical "
                             "instability): use --dtype bf16, fp32 or auto",
                             to_string(spec.family)));
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

// The sources of the table: get_min_capability of vllm/model_executor/layers/quantization/
// <method>.py: fp8 from 8.0 (Marlin's weight-only path below 8.9), AWQ from 7.5 (8.0 for its
// Marlin kernel), GPTQ from 6.0 (8.0 for Marlin), MXFP4 from 8.0, W8A8 int8 from 7.5
// (compressed-tensors' scheme), the compressed-tensors format from 7.0, bitsandbytes from 7.0,
// ModelOpt FP8 from 8.9 and ModelOpt NVFP4 from 7.5 (the newest modelopt.py; older releases
// asked 8.0 or 10.0).
std::optional<int> min_capability(std::string_view method) {
  static constexpr std::pair<std::string_view, int> kMin[] = {
      {"fp8", 80},  {"awq", 75},   {"awq_marlin", 80}, {"gptq", 60},
      {"gptq_marlin", 80}, {"mxfp4", 80}, {"int8", 75}, {"w8a8", 75},
      {"compressed-tensors", 70}, {"bitsandbytes", 70}, {"modelopt", 89},
      {"modelopt_fp4", 75},
  };
  for (const auto& [name, cc] : kMin) {
    if (name == method) return cc;
  }
  return std::nullopt;
}

}  // namespace vramsim::run
