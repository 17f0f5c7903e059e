#include "sim/run/host_stream_rate.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"
#include "sim/cost/datasheet_constants.hpp"

namespace vramsim::run {
namespace {

struct DirectionText {
  calibration::CopyKind kind;
  const char* profile_name;  // the copy kind's name in calibration profiles
  const char* words;
  double efficiency;
};

DirectionText direction_text(HostCopyDirection direction) {
  switch (direction) {
    case HostCopyDirection::kHostToDevice:
      return {calibration::CopyKind::kHostToDevicePinned, "h2d-pinned",
              "pinned host-to-device copies", cost::kPinnedHostToDeviceEfficiency};
    case HostCopyDirection::kDeviceToHost:
      return {calibration::CopyKind::kDeviceToHostPinned, "d2h-pinned",
              "device-to-host copies into pinned memory", cost::kPinnedDeviceToHostEfficiency};
  }
  VRAMSIM_UNREACHABLE("invalid HostCopyDirection");
}

}  // namespace

HostStreamRate host_copy_rate(const hardware::DeviceSpec& device,
                              const calibration::CalibrationProfile* profile,
                              HostCopyDirection direction) {
  const DirectionText d = direction_text(direction);
  const calibration::CopyRecord* largest = nullptr;
  if (profile) {
    for (const calibration::CopyRecord& c : profile->copies) {
      if (c.kind != d.kind || c.timing.median_s <= 0.0 || c.bytes <= 0) continue;
      // The first of equal sizes, so that the answer does not depend on anything but the file.
      if (!largest || c.bytes > largest->bytes) largest = &c;
    }
  }
  HostStreamRate r;
  if (largest) {
    const double bytes_per_s = calibration::copy_traffic_bytes(*largest) / largest->timing.median_s;
    r.rate = Bandwidth::bytes_per_second(bytes_per_s);
    r.source = fmt::format("calibration profile {}: {} copy of {} B, median {:.1f} GB/s",
                           profile->source_file, d.profile_name, largest->bytes,
                           bytes_per_s / 1e9);
    return r;
  }
  const double nominal = device.pcie.bandwidth_per_direction.bytes_per_second();
  r.rate = Bandwidth::bytes_per_second(nominal * d.efficiency);
  r.source = fmt::format("device sheet {}: PCIe Gen{} x16, {:.1f} GB/s per direction x {:.2f} "
                         "({}, datasheet_constants.hpp) = {:.1f} GB/s",
                         device.id, device.pcie.generation, nominal / 1e9, d.efficiency, d.words,
                         r.rate.bytes_per_second() / 1e9);
  return r;
}

HostStreamRate host_copy_rate(const BudgetAnswer& b, HostCopyDirection direction) {
  return host_copy_rate(b.device, b.calibration ? &*b.calibration : nullptr, direction);
}

}  // namespace vramsim::run
