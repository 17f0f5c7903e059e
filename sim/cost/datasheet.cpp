#include "sim/cost/datasheet.hpp"

#include <algorithm>

namespace vramsim::cost {

namespace {

double element_bytes(DType d) { return static_cast<double>(bits_of(d)) / 8.0; }

double bandwidth(const hardware::DeviceSpec& device) {
  return device.memory_bandwidth.bytes_per_second();
}

}  // namespace

Efficiencies device_efficiencies(const hardware::DeviceSpec& device) {
  Efficiencies e;
  if (device.fitted_matmul_efficiency) e.matmul = *device.fitted_matmul_efficiency;
  return e;
}

double datasheet_matmul_seconds(const hardware::DeviceSpec& device, const Efficiencies& eff,
                                DType dtype, std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto dm = static_cast<double>(m);
  const auto dn = static_cast<double>(n);
  const auto dk = static_cast<double>(k);
  const double flops = 2.0 * dm * dn * dk;
  const double bytes = (dm * dk + dk * dn + dm * dn) * element_bytes(dtype);
  const double peak = hardware::peak_flop_rate(device, dtype).per_second();
  return std::max(flops / (peak * eff.matmul), bytes / (bandwidth(device) * eff.memory));
}

double datasheet_memory_seconds(const hardware::DeviceSpec& device, const Efficiencies& eff,
                                double bytes) {
  return bytes / (bandwidth(device) * eff.memory);
}

double datasheet_prefill_attention_seconds(const hardware::DeviceSpec& device,
                                           const Efficiencies& eff, double flops, DType dtype) {
  return flops / (hardware::peak_flop_rate(device, dtype).per_second() * eff.prefill_attention);
}

double datasheet_decode_attention_seconds(const hardware::DeviceSpec& device,
                                          const Efficiencies& eff, double kv_bytes,
                                          double flops) {
  const double peak = hardware::peak_flop_rate(device, DType::kBf16).per_second();
  return std::max(kv_bytes / (bandwidth(device) * eff.decode_attention),
                  flops / (peak * eff.prefill_attention));
}

}  // namespace vramsim::cost
