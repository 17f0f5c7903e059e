// What vLLM runs a budget's engine in on its GPU: the weights' and the KV cache's dtypes as
// --dtype and --kv-cache-dtype resolve them, and the oldest compute capability each
// quantization method runs on. resolve_engine (budget_run.cpp) calls these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::run {

/// The engine's dtype for --dtype `text` (auto, bf16, fp16 or fp32), as vLLM resolves it: with
/// auto, the checkpoint's 16-bit type, bf16 for fp32 (or unstated) checkpoints, and a cast where
/// the device has no bf16 or the model type refuses fp16 (vllm/config/model.py
/// _resolve_auto_dtype), each said in `notes`. A dtype vLLM refuses for this device or model
/// type is an error under engine.dtype in `report` (the returned value is then meaningless).
DType resolve_dtype(const std::string& text, const model::ModelSpec& spec,
                    const hardware::DeviceSpec& device, std::vector<std::string>& notes,
                    ValidationReport& report);

/// The KV cache's dtype for --kv-cache-dtype `text`: auto is `dtype`; bf16, fp16, fp32 and fp8
/// as given; anything else an error under engine.kv_cache_dtype in `report`.
DType resolve_kv_dtype(const std::string& text, DType dtype, ValidationReport& report);

/// The oldest compute capability (major * 10 + minor) quantization method `method` runs on in
/// vLLM; nullopt: no limit modelled for that name (sources in budget_dtype.cpp).
std::optional<int> min_capability(std::string_view method);

}  // namespace vramsim::run
