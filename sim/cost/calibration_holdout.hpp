// The held-out check of a calibration profile: each measurement that lies inside the measured
// range is removed in turn, predicted from the rest with CalibrationTables, and compared with
// what was measured. It tells how far the interpolation can be trusted between grid points.
//
//   table        what is left out, one at a time                  predicted by
//   copy         one size of a copy kind                          log-log over the other sizes
//   gemm         one m of a measured (dtype, n, k)                log-log over the other m
//   gemm-shape   a whole (dtype, n, k) shape, each of its m       nearest other shape, scaled
//   decode       one interior context column of a decode grid     bilinear over the rest
//   prefill      one sequence length                              log-log over the others
//   collective   one size of an (op, ranks) series                log-log over the other sizes
//
// End points of a series are never left out (predicting them would extrapolate, i.e. fall back
// to the datasheet), so a series of fewer than three points contributes nothing.
#pragma once

#include <string>
#include <vector>

#include "sim/hardware/calibration_record.hpp"
#include "sim/cost/calibration_tables.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::calibration {

struct HoldoutPoint {
  std::string table;  // "copy", "gemm", "gemm-shape", "decode", "prefill", "collective"
  std::string label;  // the left-out point, e.g. "bf16 m=64 n=4096 k=4096"
  double measured_s = 0;
  double predicted_s = 0;
  Basis basis = Basis::kInterpolated;
  /// (predicted - measured) / measured.
  double relative_error() const { return (predicted_s - measured_s) / measured_s; }
};

struct HoldoutSummary {
  std::string table;
  int num_points = 0;
  double median_abs_relative_error = 0;
  double max_abs_relative_error = 0;
};

struct HoldoutReport {
  std::vector<HoldoutPoint> points;      // in table order, then profile order
  std::vector<HoldoutSummary> summaries;  // one per table with at least one point
};

/// Runs the check on `profile` (validated) with `device` as the datasheet fallback.
HoldoutReport holdout_check(const CalibrationProfile& profile,
                            const hardware::DeviceSpec& device);

}  // namespace vramsim::calibration
