// Collective times from a calibration profile, with the alpha-beta ring model of
// collective.hpp where the profile has no measurement (another rank count, a size outside the
// measured range, all-to-all): the estimate then says Basis::kDatasheet.
#pragma once

#include <optional>

#include "sim/comm/collective.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/calibration_tables.hpp"

namespace vramsim::comm {

/// The profile's name for `c`; nullopt for all-to-all (not measured).
std::optional<calibration::CollectiveOp> to_calibration_op(Collective c);

/// Time of `c` on `buffer` over `n` ranks: measured (interpolated) when `tables` holds the
/// (op, n) series and `buffer` lies within its sizes, else collective_time over `fallback`.
/// `tables` may be null (always the fallback).
calibration::TimeEstimate calibrated_collective_time(const calibration::CalibrationTables* tables,
                                                     Collective c, Bytes buffer, int n,
                                                     const LinkModel& fallback);

}  // namespace vramsim::comm
