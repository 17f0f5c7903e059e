#include "sim/run/host_stream_rate.hpp"

#include <fmt/format.h>

#include "sim/cost/datasheet_constants.hpp"

namespace vramsim::run {

HostStreamRate weight_stream_rate(const hardware::DeviceSpec& device,
                                  const calibration::CalibrationProfile* profile) {
  const calibration::CopyRecord* largest = nullptr;
  if (profile) {
    for (const calibration::CopyRecord& c : profile->copies) {
      if (c.kind != calibration::CopyKind::kHostToDevicePinned || c.timing.median_s <= 0.0 ||
          c.bytes <= 0) {
        continue;
      }
      // The first of equal sizes, so that the answer does not depend on anything but the file.
      if (!largest || c.bytes > largest->bytes) largest = &c;
    }
  }
  HostStreamRate r;
  if (largest) {
    const double bytes_per_s = calibration::copy_traffic_bytes(*largest) / largest->timing.median_s;
    r.rate = Bandwidth::bytes_per_second(bytes_per_s);
    r.source = fmt::format("calibration profile {}: h2d-pinned copy of {} B, median {:.1f} GB/s",
                           profile->source_file, largest->bytes, bytes_per_s / 1e9);
    return r;
  }
  const double nominal = device.pcie.bandwidth_per_direction.bytes_per_second();
  r.rate = Bandwidth::bytes_per_second(nominal * cost::kPinnedHostToDeviceEfficiency);
  r.source = fmt::format("device sheet {}: PCIe Gen{} x16, {:.1f} GB/s per direction x {:.2f} "
                         "(pinned host-to-device copies, datasheet_constants.hpp) = {:.1f} GB/s",
                         device.id, device.pcie.generation, nominal / 1e9,
                         cost::kPinnedHostToDeviceEfficiency, r.rate.bytes_per_second() / 1e9);
  return r;
}

HostStreamRate weight_stream_rate(const BudgetAnswer& b) {
  return weight_stream_rate(b.device, b.calibration ? &*b.calibration : nullptr);
}

}  // namespace vramsim::run
