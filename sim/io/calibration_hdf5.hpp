// A calibration profile (JSON, from vramsim-calibrate) as an HDF5 results file: one columnar
// table per measurement kind under /calibration (layout in analysis/SCHEMA.md).
#pragma once

#include <filesystem>
#include <string>

#include "sim/hardware/calibration_record.hpp"

namespace vramsim::io {

/// Writes `profile` to `out` crash-safely (temp + rename). Throws ConfigError("--out", ...) when
/// the file cannot be written.
void write_calibration_hdf5(const calibration::CalibrationProfile& profile,
                            const std::filesystem::path& out, const std::string& command_line);

}  // namespace vramsim::io
