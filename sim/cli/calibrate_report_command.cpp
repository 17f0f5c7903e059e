// `vramsim calibrate-report PROFILE [--format table|json] [--out FILE]`: a calibration profile
// measured against its device sheet, table by table, with the held-out prediction errors of the
// interpolation (the comparison is sim/run/calibration_report).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/core/error.hpp"
#include "sim/io/calibration_hdf5.hpp"
#include "sim/run/calibration_report.hpp"

namespace vramsim::cli {

namespace {

struct ReportOptions {
  std::string profile;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
};

void print_section(const char* title, const std::vector<run::SheetRow>& rows) {
  if (rows.empty()) return;
  fmt::print("\n{}\n", title);
  for (const run::SheetRow& r : rows) {
    const bool flops = r.unit == "FLOP/s";
    const double scale = flops ? 1e12 : 1e9;
    const char* unit = flops ? "TFLOP/s" : "GB/s";
    if (r.datasheet > 0) {
      fmt::print("  {:<52} {:>10.1f} {:<7} of {:>8.1f}  ({:>5.1f} %)\n", r.what,
                 r.measured / scale, unit, r.datasheet / scale, 100.0 * r.measured / r.datasheet);
    } else {
      fmt::print("  {:<52} {:>10.1f} {:<7}\n", r.what, r.measured / scale, unit);
    }
  }
}

int run_calibrate_report(const ReportOptions& o) {
  const run::CalibrationReport r = run::calibration_report(o.profile, project_root());
  if (!o.out.empty()) io::write_calibration_hdf5(r.profile, o.out, command_line());
  if (o.format == OutputFormat::kJson) {
    std::puts(run::calibration_report_json(r, o.profile).dump(2).c_str());
    return kExitOk;
  }
  const calibration::CalibrationProfile& p = r.profile;
  fmt::print("calibration profile {}\n  device {} ({}), measured {}{}\n  command: {}\n",
             o.profile, p.device_id, p.identity.name, p.identity.date,
             p.synthetic ? "  [SYNTHETIC: not a measurement]" : "", p.identity.command);
  fmt::print("\nmemory\n  total {} (sheet {}), CUDA context {}, cuBLAS handle + workspace {}, "
             "NCCL communicator {} ({} ranks), allocation granularity {}\n",
             format_bytes(Bytes(p.memory.total_bytes)), format_bytes(r.device.memory_total),
             format_bytes(Bytes(p.memory.cuda_context_bytes)),
             format_bytes(Bytes(p.memory.cublas_handle_bytes + p.memory.cublas_workspace_bytes)),
             format_bytes(Bytes(p.memory.nccl_communicator_bytes)),
             p.memory.nccl_communicator_ranks,
             format_bytes(Bytes(p.memory.allocation_granularity_bytes)));
  print_section("copy bandwidth (vs HBM / PCIe sheet)", r.copy);
  print_section("matrix products (vs dense peak)", r.gemm);
  print_section("attention (vs HBM sheet, copy kernel, dense peak)", r.attention);
  print_section("collectives (busbw vs peer link per direction)", r.collectives);
  if (!r.holdout.summaries.empty()) {
    fmt::print("\nheld-out check (each interior point predicted from the rest)\n");
    for (const calibration::HoldoutSummary& s : r.holdout.summaries) {
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
                  "Also write the profile's tables as an HDF5 file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
  add_format_option(*cmd, opts->format);
  return [cmd, opts]() { return cmd->parsed() ? run_calibrate_report(*opts) : -1; };
}

}  // namespace vramsim::cli
