// Helpers both step-time models (roofline_time_model, calibrated_time_model) use, so that they
// split work the same way.
#pragma once

#include <cstdint>

#include "sim/core/dtype.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/weight_format.hpp"

namespace vramsim::serving::detail {

/// sum_{t = a}^{b} min(t, w) for 1 <= a (w = 0: no cap); 0 when b < a.
double sum_capped(std::int64_t a, std::int64_t b, std::int64_t w);

/// The number format matmuls run in: W8A8 formats use their 8-bit rate where the device has
/// one; weight-only formats (AWQ, GPTQ, mxfp4 on pre-Blackwell parts) dequantize to the
/// activation dtype.
DType matmul_dtype(const hardware::DeviceSpec& device, const model::WeightFormat& fmt);

/// The pipeline stage holding `layer` (model::kPreLayers: the first; past the last layer: the
/// last).
int stage_of_layer(std::int64_t layer, const model::ModelSpec& spec, int pp);

}  // namespace vramsim::serving::detail
