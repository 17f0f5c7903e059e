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

std::string_view to_string(Vendor v) { return name_of(kVendors, v); }
std::optional<Vendor> vendor_from_string(std::string_view s) { return parse_name(kVendors, s); }
std::string_view to_string(PeerLinkKind k) { return name_of(kPeerLinkKinds, k); }
std::optional<PeerLinkKind> peer_link_kind_from_string(std::string_view s) {
  return parse_name(kPeerLinkKinds, s);
}

}  // namespace vramsim::hardware
