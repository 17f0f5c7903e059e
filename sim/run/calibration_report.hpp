// The run layer of `vramsim calibrate-report`: a calibration profile measured against its device
// sheet (topologies/devices/<device_id>.toml), table by table, so a user sees how far the card
// is from its datasheet, plus the held-out prediction errors of the interpolation
// (cost/calibration_holdout.hpp).
//
//   copy         bandwidth of the largest copy of each kind vs HBM (device copies) or PCIe
//   gemm         best achieved FLOP/s per dtype and per shape (largest m) vs the dense peak
//   attention    best achieved decode KV read bandwidth vs HBM and vs the measured copy
//                kernel; best achieved prefill FLOP/s vs the dense peak
//   collectives  best bus bandwidth per (op, ranks) vs the peer link's per-direction sheet
// Records whose correctness check failed are left out.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/cost/calibration_holdout.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::run {

/// One measurement against its sheet value.
struct SheetRow {
  std::string what;        // "device_kernel 256 MiB", "bf16 m=4096 n=4096 k=4096"
  double measured = 0.0;   // in `unit`
  double datasheet = 0.0;  // in `unit`; 0 when the sheet has no comparable value
  std::string unit;        // "B/s" or "FLOP/s"
  /// measured / datasheet; 0 when there is no sheet value.
  double fraction_of_datasheet() const { return datasheet > 0 ? measured / datasheet : 0.0; }
};

struct CalibrationReport {
  calibration::CalibrationProfile profile;
  hardware::DeviceSpec device;  // the profile's device_id's sheet
  std::vector<SheetRow> copy, gemm, attention, collectives;
  calibration::HoldoutReport holdout;
};

/// Loads and validates the profile at `profile_path`, finds its device under root/topologies,
/// and compares. Throws ConfigError naming the file and field (a missing profile, bad JSON, no
/// device_id, an unknown device).
CalibrationReport calibration_report(const std::filesystem::path& profile_path,
                                     const std::filesystem::path& root);

/// The report as JSON: the profile's path (as given) and identity, its memory numbers with the
/// sheet's total, each section's rows (what, measured, datasheet, fraction_of_datasheet, unit)
/// and the held-out summaries.
nlohmann::ordered_json calibration_report_json(const CalibrationReport& r,
                                               const std::string& profile_path);

}  // namespace vramsim::run
