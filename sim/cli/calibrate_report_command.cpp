// `vramsim calibrate-report PROFILE [--format table|json]`: a calibration profile measured
// against its device sheet (topologies/devices/<device_id>.toml), table by table, so a user sees
// how far the card is from its datasheet, plus the held-out prediction errors of the
// interpolation (calibration_holdout.hpp).
//
//   copy         bandwidth of the largest copy of each kind vs HBM (device copies) or PCIe
//   gemm         best achieved FLOP/s per dtype and per shape (largest m) vs the dense peak
//   decode       best achieved KV read bandwidth vs HBM and vs the measured copy kernel
//   prefill      best achieved FLOP/s vs the dense peak
//   collectives  best bus bandwidth per (op, ranks) vs the peer link's per-direction sheet
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "sim/cli/commands.hpp"
#include "sim/io/calibration_hdf5.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/calibration_holdout.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/cost/calibration_tables.hpp"
#include "sim/io/topology_loader.hpp"

namespace vramsim::cli {

namespace {

using nlohmann::ordered_json;
using namespace vramsim::calibration;

struct ReportOptions {
  std::string profile;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
};

double ratio(double measured, double sheet) { return sheet > 0 ? measured / sheet : 0.0; }

ordered_json row(const std::string& what, double measured, double sheet, const char* unit) {
  return {{"what", what}, {"measured", measured}, {"datasheet", sheet},
          {"fraction_of_datasheet", ratio(measured, sheet)}, {"unit", unit}};
}

ordered_json copy_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  ordered_json rows = ordered_json::array();
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
    rows.push_back(row(fmt::format("{} {:.0f} MiB", to_string(kind),
                                   static_cast<double>(r->bytes) / 1048576.0),
                       copy_traffic_bytes(*r) / r->timing.median_s, sheet, "B/s"));
  }
  return rows;
}

ordered_json gemm_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  ordered_json rows = ordered_json::array();
  // Per dtype the best rate over all shapes, then per shape its largest m.
  std::map<std::string, double> best;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, const GemmRecord*> largest;
  for (const GemmRecord& r : p.gemms) {
    if (r.check == CheckOutcome::kFailed) continue;
    const double rate = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) *
                        static_cast<double>(r.k) / r.timing.median_s;
    best[r.dtype] = std::max(best[r.dtype], rate);
    auto& l = largest[{r.dtype, r.n, r.k}];
    if (l == nullptr || r.m > l->m) l = &r;
  }
  auto peak_of = [&](const std::string& dtype) {
    const auto dt = dtype_from_string(dtype);
    return dt ? hardware::peak_flop_rate(d, *dt).per_second() : 0.0;
  };
  for (const auto& [dtype, rate] : best) {
    rows.push_back(row(fmt::format("{} best of all shapes", dtype), rate, peak_of(dtype),
                       "FLOP/s"));
  }
  for (const auto& [key, r] : largest) {
    const double rate = 2.0 * static_cast<double>(r->m) * static_cast<double>(r->n) *
                        static_cast<double>(r->k) / r->timing.median_s;
    rows.push_back(row(fmt::format("{} m={} n={} k={}", r->dtype, r->m, r->n, r->k), rate,
                       peak_of(r->dtype), "FLOP/s"));
  }
  return rows;
}

ordered_json attention_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d,
                            const CalibrationTables& tables) {
  ordered_json rows = ordered_json::array();
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
    rows.push_back(row(what, best_bw, d.memory_bandwidth.bytes_per_second(), "B/s"));
    if (const auto copy = tables.largest_copy_bandwidth(CopyKind::kDeviceKernel)) {
      rows.push_back(row(what + " vs measured copy kernel", best_bw, copy->bytes_per_second(),
                         "B/s"));
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
    rows.push_back(row(best_what, best_rate,
                       hardware::peak_flop_rate(d, DType::kBf16).per_second(), "FLOP/s"));
  }
  return rows;
}

ordered_json collective_rows(const CalibrationProfile& p, const hardware::DeviceSpec& d) {
  ordered_json rows = ordered_json::array();
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
      rows.push_back(row(fmt::format("{} 1 rank, algbw", to_string(key.first)), bw.second, 0.0,
                         "B/s"));
    } else {
      rows.push_back(row(fmt::format("{} {} ranks, busbw", to_string(key.first), key.second),
                         bw.first, link, "B/s"));
    }
  }
  return rows;
}

void print_section(const char* title, const ordered_json& rows) {
  if (rows.empty()) return;
  fmt::print("\n{}\n", title);
  for (const auto& r : rows) {
    const double measured = r["measured"].get<double>();
    const double sheet = r["datasheet"].get<double>();
    const bool flops = r["unit"] == "FLOP/s";
    const double scale = flops ? 1e12 : 1e9;
    const char* unit = flops ? "TFLOP/s" : "GB/s";
    if (sheet > 0) {
      fmt::print("  {:<52} {:>10.1f} {:<7} of {:>8.1f}  ({:>5.1f} %)\n", r["what"].get<std::string>(),
                 measured / scale, unit, sheet / scale, 100.0 * measured / sheet);
    } else {
      fmt::print("  {:<52} {:>10.1f} {:<7}\n", r["what"].get<std::string>(), measured / scale,
                 unit);
    }
  }
}

int run_calibrate_report(const ReportOptions& o) {
  const CalibrationProfile p = load_calibration_profile(o.profile);
  const hardware::DeviceSpec d =
      io::find_device(p.device_id, project_root() / "topologies", "device_id");
  const CalibrationTables tables(p, d);
  const HoldoutReport holdout = holdout_check(p, d);
  if (!o.out.empty()) io::write_calibration_hdf5(p, o.out, command_line());

  ordered_json out;
  out["profile"] = o.profile;
  out["device_id"] = p.device_id;
  out["device_name"] = p.identity.name;
  out["synthetic"] = p.synthetic;
  out["command"] = p.identity.command;
  out["date"] = p.identity.date;
  out["memory"] = {{"total_bytes", p.memory.total_bytes},
                   {"datasheet_total_bytes", d.memory_total.count()},
                   {"cuda_context_bytes", p.memory.cuda_context_bytes},
                   {"cublas_bytes", p.memory.cublas_handle_bytes + p.memory.cublas_workspace_bytes},
                   {"nccl_communicator_bytes", p.memory.nccl_communicator_bytes},
                   {"allocation_granularity_bytes", p.memory.allocation_granularity_bytes}};
  out["copy"] = copy_rows(p, d);
  out["gemm"] = gemm_rows(p, d);
  out["attention"] = attention_rows(p, d, tables);
  out["collectives"] = collective_rows(p, d);
  ordered_json held = ordered_json::array();
  for (const HoldoutSummary& s : holdout.summaries) {
    held.push_back({{"table", s.table}, {"num_points", s.num_points},
                    {"median_abs_relative_error", s.median_abs_relative_error},
                    {"max_abs_relative_error", s.max_abs_relative_error}});
  }
  out["holdout"] = held;

  if (o.format == OutputFormat::kJson) {
    std::puts(out.dump(2).c_str());
    return kExitOk;
  }
  fmt::print("calibration profile {}\n  device {} ({}), measured {}{}\n  command: {}\n",
             o.profile, p.device_id, p.identity.name, p.identity.date,
             p.synthetic ? "  [SYNTHETIC: not a measurement]" : "", p.identity.command);
  fmt::print("\nmemory\n  total {} (sheet {}), CUDA context {}, cuBLAS handle + workspace {}, "
             "NCCL communicator {} ({} ranks), allocation granularity {}\n",
             format_bytes(Bytes(p.memory.total_bytes)), format_bytes(d.memory_total),
             format_bytes(Bytes(p.memory.cuda_context_bytes)),
             format_bytes(Bytes(p.memory.cublas_handle_bytes + p.memory.cublas_workspace_bytes)),
             format_bytes(Bytes(p.memory.nccl_communicator_bytes)),
             p.memory.nccl_communicator_ranks,
             format_bytes(Bytes(p.memory.allocation_granularity_bytes)));
  print_section("copy bandwidth (vs HBM / PCIe sheet)", out["copy"]);
  print_section("matrix products (vs dense peak)", out["gemm"]);
  print_section("attention (vs HBM sheet, copy kernel, dense peak)", out["attention"]);
  print_section("collectives (busbw vs peer link per direction)", out["collectives"]);
  if (!holdout.summaries.empty()) {
    fmt::print("\nheld-out check (each interior point predicted from the rest)\n");
    for (const HoldoutSummary& s : holdout.summaries) {
      fmt::print("  {:<12} {:>4} points  median |error| {:>6.1f} %  max {:>6.1f} %\n", s.table,
                 s.num_points, 100.0 * s.median_abs_relative_error,
                 100.0 * s.max_abs_relative_error);
    }
  }
  return kExitOk;
}

}  // namespace

RunFn register_calibrate_report(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate-report", "A calibration profile against its device sheet, with held-out errors");
  cmd->add_option("profile", opts->profile, "calibration profile (JSON, from vramsim-calibrate)")
      ->required();
  cmd->add_option("--out", opts->out,
                  "Also write the profile's tables as an HDF5 file (see analysis/SCHEMA.md)");
  add_format_option(*cmd, opts->format);
  return [cmd, opts]() { return cmd->parsed() ? run_calibrate_report(*opts) : -1; };
}

}  // namespace vramsim::cli
