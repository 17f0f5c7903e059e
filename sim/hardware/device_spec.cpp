#include "sim/hardware/device_spec.hpp"

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

std::string_view to_string(Vendor v) {
  switch (v) {
    case Vendor::kNvidia: return "nvidia";
    case Vendor::kAmd: return "amd";
  }
  VRAMSIM_UNREACHABLE("invalid Vendor");
}

std::optional<Vendor> vendor_from_string(std::string_view s) {
  if (s == "nvidia") return Vendor::kNvidia;
  if (s == "amd") return Vendor::kAmd;
  return std::nullopt;
}

std::string_view to_string(PeerLinkKind k) {
  switch (k) {
    case PeerLinkKind::kNvlink: return "nvlink";
    case PeerLinkKind::kInfinityFabric: return "infinity-fabric";
  }
  VRAMSIM_UNREACHABLE("invalid PeerLinkKind");
}

std::optional<PeerLinkKind> peer_link_kind_from_string(std::string_view s) {
  if (s == "nvlink") return PeerLinkKind::kNvlink;
  if (s == "infinity-fabric") return PeerLinkKind::kInfinityFabric;
  return std::nullopt;
}

}  // namespace vramsim::hardware
