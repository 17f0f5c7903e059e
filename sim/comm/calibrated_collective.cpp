#include "sim/comm/calibrated_collective.hpp"

#include "sim/core/check.hpp"

namespace vramsim::comm {

std::optional<calibration::CollectiveOp> to_calibration_op(Collective c) {
  using calibration::CollectiveOp;
  switch (c) {
    case Collective::kAllReduce: return CollectiveOp::kAllReduce;
    case Collective::kAllGather: return CollectiveOp::kAllGather;
    case Collective::kReduceScatter: return CollectiveOp::kReduceScatter;
    case Collective::kBroadcast: return CollectiveOp::kBroadcast;
    case Collective::kSendRecv: return CollectiveOp::kSendRecv;
    case Collective::kAllToAll: return std::nullopt;
  }
  VRAMSIM_UNREACHABLE("invalid Collective");
}

calibration::TimeEstimate calibrated_collective_time(const calibration::CalibrationTables* tables,
                                                     Collective c, Bytes buffer, int n,
                                                     const LinkModel& fallback) {
  if (tables != nullptr) {
    if (const auto op = to_calibration_op(c)) {
      if (const auto e = tables->collective_time(*op, buffer, n)) return *e;
    }
  }
  return {collective_time(c, buffer, n, fallback), calibration::Basis::kDatasheet};
}

}  // namespace vramsim::comm
