// The rate at which host<->device copies run in a serving step: the achievable copy rate between
// pinned host memory and the device, not the PCIe datasheet rate. Every host copy vramsim's
// serving simulation times comes from pinned host memory in vLLM:
//   * the weights of --cpu-offload-gb, read in every forward pass
//     (vllm/model_executor/models/utils.py, maybe_offload_to_cpu: pin_memory);
//   * the CPU tier of the native KV offloading (vllm/v1/kv_offload/worker/cpu_gpu.py: its CPU
//     tensors are torch.zeros(..., pin_memory=is_pin_memory_available()));
//   * the swap space of swap preemption (vllm/worker/cache_engine.py, _allocate_kv_cache:
//     pin_memory on the CPU device);
//   * the CPU cache of LoRA adapters (vllm/lora/models.py, LoRAModel.from_lora_tensors: pinned
//     when the device is the CPU).
// The rate, per direction, is a calibration profile's measured pinned copies of that direction
// (h2d-pinned or d2h-pinned) when the profile has them, else the device sheet's PCIe bandwidth
// per direction times cost::kPinnedHostToDeviceEfficiency or cost::kPinnedDeviceToHostEfficiency
// (sim/cost/datasheet_constants.hpp, with their sources).
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/units.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/run/budget_run.hpp"

namespace vramsim::run {

enum class HostCopyDirection : std::uint8_t { kHostToDevice, kDeviceToHost };

struct HostStreamRate {
  Bandwidth rate;      // in the one direction asked for
  std::string source;  // where it comes from, in words (serve's and budget's provenance)
};

/// The pinned copy rate of `device` in `direction`: from `profile` (nullptr: none) when it holds
/// a pinned copy of that direction with a positive median time (the largest such copy, whose
/// rate is closest to the link's steady state), else the datasheet fallback described above.
HostStreamRate host_copy_rate(const hardware::DeviceSpec& device,
                              const calibration::CalibrationProfile* profile,
                              HostCopyDirection direction);

/// The rate for a budget's device and its calibration profile (--calibration), if any.
HostStreamRate host_copy_rate(const BudgetAnswer& b, HostCopyDirection direction);

}  // namespace vramsim::run
