// The rate at which the weights of --cpu-offload-gb reach the device in every step: the
// achievable host-to-device copy rate from pinned memory, not the PCIe datasheet rate. vLLM
// keeps offloaded weights in pinned host memory and reads them in every forward pass
// (vllm/model_executor/models/utils.py, maybe_offload_to_cpu), so a step moves them at what a
// pinned copy reaches. The rate is a calibration profile's measured h2d-pinned copies when the
// profile has them, else the device sheet's PCIe bandwidth per direction times
// cost::kPinnedHostToDeviceEfficiency (sim/cost/datasheet_constants.hpp, with its sources).
#pragma once

#include <string>

#include "sim/core/units.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/run/budget_run.hpp"

namespace vramsim::run {

struct HostStreamRate {
  Bandwidth rate;      // per direction, host to device
  std::string source;  // where it comes from, in words (serve's and budget's provenance)
};

/// The pinned host-to-device rate of `device`: from `profile` (nullptr: none) when it holds an
/// h2d-pinned copy with a positive median time (the largest such copy, whose rate is closest to
/// the link's steady state), else the datasheet fallback described above.
HostStreamRate weight_stream_rate(const hardware::DeviceSpec& device,
                                  const calibration::CalibrationProfile* profile);

/// The rate for a budget's device and its calibration profile (--calibration), if any.
HostStreamRate weight_stream_rate(const BudgetAnswer& b);

}  // namespace vramsim::run
