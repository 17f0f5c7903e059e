#include "sim/hardware/device_spec.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"

namespace vramsim::hardware {

std::optional<FlopRate> native_peak(const DeviceSpec& device, DType dtype) {
  const PeakRates& p = device.peak;
  switch (dtype) {
    case DType::kFp32: return p.fp32;
    case DType::kFp16: return p.fp16;
    case DType::kBf16: return p.bf16;
    case DType::kFp8: return p.fp8;
    case DType::kInt8: return p.int8;
    case DType::kInt4: return std::nullopt;
  }
  VRAMSIM_UNREACHABLE("invalid DType");
}

bool supports_natively(const DeviceSpec& device, DType dtype) {
  return native_peak(device, dtype).has_value();
}

bool has_switch_fabric(const DeviceSpec& device) {
  return device.peer_link.has_value() && !device.peer_link->bridge_only;
}

bool has_nvls(const DeviceSpec& device) {
  if (!has_switch_fabric(device)) return false;
  return device.vendor != Vendor::kNvidia || device.compute_capability >= 90;
}

std::vector<DType> native_dtypes(const DeviceSpec& device) {
  std::vector<DType> out;
  for (DType d : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kFp8, DType::kInt8,
                  DType::kInt4}) {
    if (supports_natively(device, d)) out.push_back(d);
  }
  return out;
}

FlopRate peak_flop_rate(const DeviceSpec& device, DType dtype) {
  const PeakRates& p = device.peak;
  const FlopRate sixteen_bit = p.bf16.value_or(p.fp16);
  switch (dtype) {
    case DType::kFp32: return p.fp32;
    case DType::kFp16: return p.fp16;
    case DType::kBf16: return sixteen_bit;
    case DType::kFp8: return p.fp8.value_or(sixteen_bit);
    case DType::kInt8: return p.int8.value_or(p.fp16);
    case DType::kInt4: return p.fp16;
  }
  VRAMSIM_UNREACHABLE("invalid DType");
}

namespace {

/// Adds a problem when `value` (positive, else the loader reported it) lies outside [lo, hi].
void check_range(std::vector<SheetProblem>& out, const char* field, double value, double lo,
                 double hi, const char* unit) {
  if (!(value > 0.0)) return;
  if (value >= lo && value <= hi) return;
  out.push_back({field, fmt::format("{:g} {} is outside the accepted range [{:g}, {:g}] {}",
                                    value, unit, lo, hi, unit)});
}

}  // namespace

std::vector<SheetProblem> implausible_figures(const DeviceSpec& device) {
  std::vector<SheetProblem> out;
  check_range(out, "memory.total", static_cast<double>(device.memory_total.count()),
              kMinMemoryBytes, kMaxMemoryBytes, "B");
  check_range(out, "memory.marketed", static_cast<double>(device.memory_marketed.count()),
              kMinMemoryBytes, kMaxMemoryBytes, "B");
  check_range(out, "memory.bandwidth", device.memory_bandwidth.bytes_per_second(),
              kMinMemoryBandwidth, kMaxMemoryBandwidth, "B/s");
  const PeakRates& p = device.peak;
  const auto rate = [&](const char* field, const std::optional<FlopRate>& r) {
    if (r) check_range(out, field, r->per_second(), kMinFlopRate, kMaxFlopRate, "FLOP/s");
  };
  rate("compute.fp32", p.fp32);
  rate("compute.fp16", p.fp16);
  rate("compute.tf32", p.tf32);
  rate("compute.bf16", p.bf16);
  rate("compute.fp8", p.fp8);
  rate("compute.int8", p.int8);
  if (device.peer_link) {
    check_range(out, "peer_link.bandwidth_per_direction",
                device.peer_link->bandwidth_per_direction.bytes_per_second(), kMinLinkBandwidth,
                kMaxLinkBandwidth, "B/s");
  }
  check_range(out, "pcie.bandwidth_per_direction",
              device.pcie.bandwidth_per_direction.bytes_per_second(), kMinLinkBandwidth,
              kMaxLinkBandwidth, "B/s");
  return out;
}

std::string_view to_string(Vendor v) { return name_of(kVendors, v); }
std::optional<Vendor> vendor_from_string(std::string_view s) { return parse_name(kVendors, s); }
std::string_view to_string(PeerLinkKind k) { return name_of(kPeerLinkKinds, k); }
std::optional<PeerLinkKind> peer_link_kind_from_string(std::string_view s) {
  return parse_name(kPeerLinkKinds, s);
}

}  // namespace vramsim::hardware
