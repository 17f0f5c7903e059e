#include "sim/serving/step_cost_helpers.hpp"

#include "sim/core/check.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::serving::detail {

double sum_capped(std::int64_t a, std::int64_t b, std::int64_t w) {
  auto sum_range = [](std::int64_t lo, std::int64_t hi) {  // lo + ... + hi
    return hi < lo ? 0.0 : static_cast<double>(hi - lo + 1) * static_cast<double>(lo + hi) / 2.0;
  };
  if (b < a) return 0.0;
  if (w <= 0 || b <= w) return sum_range(a, b);
  if (a > w) return static_cast<double>(b - a + 1) * static_cast<double>(w);
  return sum_range(a, w) + static_cast<double>(b - w) * static_cast<double>(w);
}

DType matmul_dtype(const hardware::DeviceSpec& device, const model::WeightFormat& fmt) {
  switch (fmt.quantization) {
    case model::QuantMethod::kNone: return fmt.dtype;
    case model::QuantMethod::kFp8:
      return hardware::supports_natively(device, DType::kFp8) ? DType::kFp8 : fmt.dtype;
    case model::QuantMethod::kInt8:
      return hardware::supports_natively(device, DType::kInt8) ? DType::kInt8 : fmt.dtype;
    case model::QuantMethod::kModelOpt:  // FP8 checkpoints run fp8 GEMMs where the part has them
      return hardware::supports_natively(device, DType::kFp8) ? DType::kFp8 : fmt.dtype;
    case model::QuantMethod::kAwq:
    case model::QuantMethod::kGptq:
    case model::QuantMethod::kMxfp4:
    case model::QuantMethod::kBitsAndBytes:  // dequantized to bf16 inside matmul_4bit / LLM.int8()
    // NOTE: NVFP4 runs fp4 tensor cores only on Blackwell; the device sheets give no fp4 peak,
    // and elsewhere vLLM runs it weight-only through Marlin (16-bit matmuls).
    case model::QuantMethod::kModelOptFp4: return fmt.dtype;
  }
  VRAMSIM_UNREACHABLE("invalid QuantMethod");
}

int stage_of_layer(std::int64_t layer, const model::ModelSpec& spec, int pp) {
  if (layer == model::kPreLayers) return 0;
  if (layer >= spec.num_layers) return pp - 1;
  for (int r = 0; r < pp; ++r) {
    const model::LayerRange range = model::stage_layers(spec.num_layers, pp, r);
    if (layer >= range.begin && layer < range.end) return r;
  }
  VRAMSIM_UNREACHABLE("layer outside every stage");
}

}  // namespace vramsim::serving::detail
