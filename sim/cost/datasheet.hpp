// The datasheet roofline of the cost model: each cost from a device's peak FLOP/s and memory
// bandwidth scaled by the efficiencies of datasheet_constants.hpp. The one copy of these
// formulas: CostModel answers with them where nothing was measured, and CalibrationTables
// falls back to them outside its measured range. Times are in seconds, not yet rounded.
#pragma once

#include <cstdint>

#include "sim/core/dtype.hpp"
#include "sim/cost/datasheet_constants.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::cost {

/// The datasheet efficiencies for `device`: datasheet_constants.hpp's, the matmul one replaced
/// by the device sheet's [fitted] matmul_efficiency where a public profile measured it.
Efficiencies device_efficiencies(const hardware::DeviceSpec& device);

/// C[m x n] = A[m x k] B[k x n] in `dtype`: max(2mnk / (peak * matmul), (mk + kn + mn)
/// elements / (bandwidth * memory)).
double datasheet_matmul_seconds(const hardware::DeviceSpec& device, const Efficiencies& eff,
                                DType dtype, std::int64_t m, std::int64_t n, std::int64_t k);

/// `bytes` read and written by memory-bound kernels: bytes / (bandwidth * memory).
double datasheet_memory_seconds(const hardware::DeviceSpec& device, const Efficiencies& eff,
                                double bytes);

/// Prefill (flash) attention of `flops`: flops / (peak(dtype) * prefill_attention).
double datasheet_prefill_attention_seconds(const hardware::DeviceSpec& device,
                                           const Efficiencies& eff, double flops, DType dtype);

/// Paged decode attention reading `kv_bytes` with `flops` of score and value products:
/// max(kv_bytes / (bandwidth * decode_attention), flops / (peak(bf16) * prefill_attention)).
double datasheet_decode_attention_seconds(const hardware::DeviceSpec& device,
                                          const Efficiencies& eff, double kv_bytes,
                                          double flops);

}  // namespace vramsim::cost
