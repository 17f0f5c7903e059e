#include "sim/run/calibration_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "sim/cost/calibration_tables.hpp"
#include "sim/io/topology_loader.hpp"

namespace vramsim::run {
namespace {

using namespace vramsim::calibration;  // NOTE: the profile's record types and formulas

std::vector<SheetRow> copy_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  std::vector<SheetRow> rows;
  std::map<CopyKind, const CopyRecord*> largest;
  for (const CopyRecord& r : p.copies) {
    if (r.check == CheckOutcome::kFailed) continue;
    auto& best = largest[r.kind];
    if (best == nullptr || r.bytes > best->bytes) best = &r;
  }
  for (const auto& [kind, r] : largest) {
    const bool device = kind == CopyKind::kDeviceKernel || kind == CopyKind::kDeviceMemcpy;
    const double sheet = device ? d.memory_bandwidth.bytes_per_second()
                                : d.pcie.bandwidth_per_direction.bytes_per_second();
    rows.push_back({fmt::format("{} {:.0f} MiB", to_string(kind),
                                static_cast<double>(r->bytes) / 1048576.0),
                    copy_traffic_bytes(*r) / r->timing.median_s, sheet, "B/s"});
  }
  return rows;
}

double gemm_rate(const GemmRecord& r) {
  return 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k) /
         r.timing.median_s;
}

std::vector<SheetRow> gemm_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  std::vector<SheetRow> rows;
  // Per dtype the best rate over all shapes, then per shape its largest m.
  std::map<std::string, double> best;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, const GemmRecord*> largest;
  for (const GemmRecord& r : p.gemms) {
    if (r.check == CheckOutcome::kFailed) continue;
    best[r.dtype] = std::max(best[r.dtype], gemm_rate(r));
    auto& l = largest[{r.dtype, r.n, r.k}];
    if (l == nullptr || r.m > l->m) l = &r;
  }
  auto peak_of = [&](const std::string& dtype) {
    const auto dt = dtype_from_string(dtype);
    return dt ? hardware::peak_flop_rate(d, *dt).per_second() : 0.0;
  };
  for (const auto& [dtype, rate] : best) {
    rows.push_back({fmt::format("{} best of all shapes", dtype), rate, peak_of(dtype), "FLOP/s"});
  }
  for (const auto& [key, r] : largest) {
    rows.push_back({fmt::format("{} m={} n={} k={}", r->dtype, r->m, r->n, r->k), gemm_rate(*r),
                    peak_of(r->dtype), "FLOP/s"});
  }
  return rows;
}

std::vector<SheetRow> attention_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d,
                                     const CalibrationTables& tables) {
  std::vector<SheetRow> rows;
  const DecodeAttentionRecord* best = nullptr;
  double best_bw = 0;
  for (const DecodeAttentionRecord& r : p.decode_attention) {
    if (r.check == CheckOutcome::kFailed) continue;
    const double bytes = static_cast<double>(r.batch * r.context * 2 * r.num_kv_heads *
                                             r.head_dim) *
                         (r.kv_dtype == "fp8" ? 1.0 : 2.0);
    if (bytes / r.timing.median_s > best_bw) {
      best_bw = bytes / r.timing.median_s;
      best = &r;
    }
  }
  if (best != nullptr) {
    const std::string what = fmt::format("decode KV read, batch={} context={}", best->batch,
                                         best->context);
    rows.push_back({what, best_bw, d.memory_bandwidth.bytes_per_second(), "B/s"});
    if (const auto copy = tables.largest_copy_bandwidth(CopyKind::kDeviceKernel)) {
      rows.push_back({what + " vs measured copy kernel", best_bw, copy->bytes_per_second(), "B/s"});
    }
  }
  double best_rate = 0;
  std::string best_what;
  for (const PrefillAttentionRecord& r : p.prefill_attention) {
    if (r.check == CheckOutcome::kFailed) continue;
    const auto s = static_cast<double>(r.seq_len);
    const double flops = static_cast<double>(r.batch * r.num_q_heads * 4 * r.head_dim) * s *
                         (s + 1.0) / 2.0;
    if (flops / r.timing.median_s > best_rate) {
      best_rate = flops / r.timing.median_s;
      best_what = fmt::format("prefill ({}), seq_len={}", r.implementation, r.seq_len);
    }
  }
  if (best_rate > 0) {
    rows.push_back({best_what, best_rate, hardware::peak_flop_rate(d, DType::kBf16).per_second(),
                    "FLOP/s"});
  }
  return rows;
}

std::vector<SheetRow> collective_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  std::vector<SheetRow> rows;
  std::map<std::pair<CollectiveOp, int>, std::pair<double, double>> best;  // busbw, algbw
  for (const CollectiveRecord& r : p.collectives) {
    if (r.check == CheckOutcome::kFailed) continue;
    auto& b = best[{r.op, r.num_ranks}];
    b.first = std::max(b.first, bus_bandwidth(r.op, r.num_ranks, r.bytes, r.timing.median_s));
    b.second = std::max(b.second, algorithm_bandwidth(r.bytes, r.timing.median_s));
  }
  const double link = d.peer_link ? d.peer_link->bandwidth_per_direction.bytes_per_second()
                                  : d.pcie.bandwidth_per_direction.bytes_per_second();
  for (const auto& [key, bw] : best) {
    // One rank moves nothing over links (busbw factor 0 or a local copy): show algbw, no sheet.
    if (key.second == 1) {
      rows.push_back({fmt::format("{} 1 rank, algbw", to_string(key.first)), bw.second, 0.0, "B/s"});
    } else {
      rows.push_back({fmt::format("{} {} ranks, busbw", to_string(key.first), key.second), bw.first,
                      link, "B/s"});
    }
  }
  return rows;
}

nlohmann::ordered_json rows_json(const std::vector<SheetRow>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const SheetRow& r : rows) {
    list.push_back({{"what", r.what}, {"measured", r.measured}, {"datasheet", r.datasheet},
                    {"fraction_of_datasheet", r.fraction_of_datasheet()}, {"unit", r.unit}});
  }
  return list;
}

}  // namespace

CalibrationReport calibration_report(const std::filesystem::path& profile_path,
                                     const std::filesystem::path& root) {
  CalibrationReport r;
  r.profile = load_calibration_profile(profile_path);
  r.device = io::find_device(r.profile.device_id, root / "topologies", "device_id");
  const CalibrationTables tables(r.profile, r.device);
  r.holdout = holdout_check(r.profile, r.device);
  r.copy = copy_rows(r.profile, r.device);
  r.gemm = gemm_rows(r.profile, r.device);
  r.attention = attention_rows(r.profile, r.device, tables);
  r.collectives = collective_rows(r.profile, r.device);
  return r;
}

nlohmann::ordered_json calibration_report_json(const CalibrationReport& r,
                                               const std::string& profile_path) {
  const CalibrationProfile& p = r.profile;
  nlohmann::ordered_json out;
  out["profile"] = profile_path;
  out["device_id"] = p.device_id;
  out["device_name"] = p.identity.name;
  out["synthetic"] = p.synthetic;
  out["command"] = p.identity.command;
  out["date"] = p.identity.date;
  out["memory"] = {{"total_bytes", p.memory.total_bytes},
                   {"datasheet_total_bytes", r.device.memory_total.count()},
                   {"cuda_context_bytes", p.memory.cuda_context_bytes},
                   {"cublas_bytes", p.memory.cublas_handle_bytes + p.memory.cublas_workspace_bytes},
                   {"nccl_communicator_bytes", p.memory.nccl_communicator_bytes},
                   {"allocation_granularity_bytes", p.memory.allocation_granularity_bytes}};
  out["copy"] = rows_json(r.copy);
  out["gemm"] = rows_json(r.gemm);
  out["attention"] = rows_json(r.attention);
  out["collectives"] = rows_json(r.collectives);
  nlohmann::ordered_json held = nlohmann::ordered_json::array();
  for (const HoldoutSummary& s : r.holdout.summaries) {
    held.push_back({{"table", s.table}, {"num_points", s.num_points},
                    {"median_abs_relative_error", s.median_abs_relative_error},
                    {"max_abs_relative_error", s.max_abs_relative_error}});
  }
  out["holdout"] = held;
  return out;
}

}  // namespace vramsim::run
