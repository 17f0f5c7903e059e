#include "sim/cost/cost_model.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "sim/core/check.hpp"
#include "sim/cost/datasheet.hpp"

namespace vramsim::cost {

namespace {

TimeEstimate datasheet(double seconds) {
  return {Duration::from_seconds(seconds), Basis::kDatasheet};
}

}  // namespace

void BasisCounts::add(Basis b) {
  switch (b) {
    case Basis::kMeasured: ++measured; return;
    case Basis::kInterpolated: ++interpolated; return;
    case Basis::kScaled: ++scaled; return;
    case Basis::kDatasheet: ++datasheet; return;
  }
  VRAMSIM_UNREACHABLE("invalid Basis");
}

std::optional<calibration::CollectiveOp> to_calibration_op(comm::Collective c) {
  using calibration::CollectiveOp;
  switch (c) {
    case comm::Collective::kAllReduce: return CollectiveOp::kAllReduce;
    case comm::Collective::kAllGather: return CollectiveOp::kAllGather;
    case comm::Collective::kReduceScatter: return CollectiveOp::kReduceScatter;
    case comm::Collective::kBroadcast: return CollectiveOp::kBroadcast;
    case comm::Collective::kSendRecv: return CollectiveOp::kSendRecv;
    case comm::Collective::kAllToAll: return std::nullopt;
  }
  VRAMSIM_UNREACHABLE("invalid Collective");
}

CostModel::CostModel(const hardware::DeviceSpec& device)
    : CostModel(device, device_efficiencies(device)) {}

CostModel::CostModel(const hardware::DeviceSpec& device, const Efficiencies& eff)
    : device_(device), eff_(eff) {}

CostModel::CostModel(const hardware::DeviceSpec& device,
                     const calibration::CalibrationProfile& profile)
    : CostModel(device, profile, device_efficiencies(device)) {}

CostModel::CostModel(const hardware::DeviceSpec& device,
                     const calibration::CalibrationProfile& profile, const Efficiencies& eff)
    : device_(device), eff_(eff), tables_(std::in_place, profile, device, eff) {}

TimeEstimate CostModel::matmul(DType dtype, std::int64_t m, std::int64_t n,
                               std::int64_t k) const {
  if (tables_) return tables_->gemm_time(dtype, m, n, k);
  VRAMSIM_CHECK(m > 0 && n > 0 && k > 0, "gemm {} x {} x {}", m, n, k);
  return datasheet(datasheet_matmul_seconds(device_, eff_, dtype, m, n, k));
}

TimeEstimate CostModel::prefill_attention(const PrefillAttention& a) const {
  VRAMSIM_CHECK(a.attended_pairs > 0 && a.num_sequences > 0, "prefill attention over {} pairs",
                a.attended_pairs);
  const double per_pair = a.flops_per_pair > 0
                              ? a.flops_per_pair
                              : 4.0 * static_cast<double>(a.num_q_heads * a.head_dim);
  if (tables_) {
    const auto seqs = static_cast<double>(a.num_sequences);
    const TimeEstimate one = tables_->prefill_attention_time(a.attended_pairs / seqs,
                                                             a.num_q_heads, a.head_dim, a.dtype);
    if (!one.fallback()) return {Duration::from_seconds(one.time.seconds() * seqs), one.basis};
  }
  return datasheet(
      datasheet_prefill_attention_seconds(device_, eff_, per_pair * a.attended_pairs, a.dtype));
}

TimeEstimate CostModel::decode_attention(std::int64_t batch, double context,
                                         const AttentionShape& shape) const {
  if (tables_) return tables_->decode_attention_time(batch, context, shape);
  VRAMSIM_CHECK(batch > 0 && context > 0, "decode attention of {} x {}", batch, context);
  const double tokens = static_cast<double>(batch) * context;
  return datasheet(datasheet_decode_attention_seconds(
      device_, eff_, tokens * shape.kv_bytes_per_token,
      4.0 * static_cast<double>(shape.num_q_heads * shape.head_dim) * tokens));
}

TimeEstimate CostModel::memory_bound(Bytes moved) const {
  if (moved <= Bytes(0)) return {Duration::zero(), Basis::kDatasheet};
  if (tables_) {
    // A device-to-device copy of n bytes reads n and writes n (CopyRecord).
    const TimeEstimate e =
        tables_->copy_time(calibration::CopyKind::kDeviceKernel, Bytes(moved.count() / 2));
    if (!e.fallback()) return e;
  }
  return {moved / (eff_.memory * device_.memory_bandwidth), Basis::kDatasheet};
}

TimeEstimate CostModel::collective(comm::Collective c, Bytes buffer, int num_ranks,
                                   const comm::LinkModel& link) const {
  if (tables_) {
    if (const auto op = to_calibration_op(c)) {
      if (const auto e = tables_->collective_time(*op, buffer, num_ranks)) return *e;
    }
  }
  return {comm::collective_time(c, buffer, num_ranks, link), Basis::kDatasheet};
}

std::string CostModel::describe() const {
  if (!tables_) return fmt::format("datasheet roofline ({})", device_.id);
  const calibration::CalibrationProfile& p = tables_->profile();
  const std::string file = p.source_file.empty()
                               ? std::string("(in memory)")
                               : std::filesystem::path(p.source_file).filename().string();
  return fmt::format("calibration {} ({} {}{}), datasheet {} outside the measured range", file,
                     p.device_id, p.identity.name, p.synthetic ? ", SYNTHETIC" : "", device_.id);
}

}  // namespace vramsim::cost
