// `vramsim sweep GRID.toml`: many serve or train runs, one per point of a grid (a Cartesian
// product of scenario fields, or listed points), over local cores and, under mpirun or srun,
// over MPI ranks; results in one HDF5 file, resumable. The sweep itself is the run layer's
// (sim/run/sweep_run.hpp); this file parses the flags, draws the progress bar and prints.
//
// Exit codes: 2 for a bad grid (before any point runs); otherwise 0, even when some points are
// infeasible or refused as bad input (each recorded with its reason: a sweep over combinations
// meets some that cannot run), unless every point was refused (then the base scenario is most
// likely wrong): 2, with the file still written.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/core/error.hpp"
#include "sim/run/sweep_run.hpp"

namespace vramsim::cli {

namespace {

struct SweepFlags {
  std::string grid, out;
  int jobs = 0;
  bool resume = false;
  OutputFormat format = OutputFormat::kTable;
};

std::string cell_text(const run::SummaryColumn& c, std::size_t row) {
  if (!c.present[row]) return "-";
  switch (c.type) {
    case io::ColumnType::kInt64:
      if (c.units == io::kUnitsBytes) {
        return fmt::format("{:.1f}", static_cast<double>(c.ints[row]) / (1 << 30));
      }
      return fmt::format("{}", c.ints[row]);
    case io::ColumnType::kFloat64: {
      const double v = c.doubles[row];
      if (c.units == io::kUnitsBytes) return fmt::format("{:.1f}", v / (1 << 30));
      return std::fabs(v) >= 100.0 ? fmt::format("{:.1f}", v) : fmt::format("{:.4g}", v);
    }
    case io::ColumnType::kString: return c.strings[row];
  }
  return "";
}

/// A table for people: the axes and the key metrics of each point, then why points failed.
std::string summary_text(const run::SweepRun& s) {
  const io::SweepGrid& grid = s.grid;
  const std::vector<run::SummaryColumn>& columns = s.columns;
  const std::vector<run::PointRecord>& records = s.records;
  // The metrics worth a glance; every column is in --format json and the results file.
  static const std::vector<std::pair<std::string, std::string>> kServe = {
      {"throughput_output_tokens_per_s", "tok/s"}, {"goodput_requests_per_s", "goodput/s"},
      {"ttft_p99_s", "TTFT p99 s"},                {"tpot_p99_s", "TPOT p99 s"},
      {"e2e_p99_s", "e2e p99 s"},                  {"num_preemptions", "preempt"},
      {"kv_peak_blocks", "KV peak"}};
  static const std::vector<std::pair<std::string, std::string>> kTrain = {
      {"peak_reserved_bytes", "reserved GiB"}, {"step_time_s", "step s"},
      {"tokens_per_s", "tokens/s"},            {"mfu", "MFU"}};
  std::vector<std::pair<const run::SummaryColumn*, std::string>> shown;
  const auto find = [&](const std::string& name) -> const run::SummaryColumn* {
    for (const run::SummaryColumn& c : columns) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  shown.emplace_back(find("point_index"), "#");
  shown.emplace_back(find("status"), "status");
  for (const std::string& axis : grid.axes) shown.emplace_back(find(axis), axis);
  for (const auto& [name, title] : grid.kind == io::SweepKind::kServe ? kServe : kTrain) {
    if (const run::SummaryColumn* c = find(name)) shown.emplace_back(c, title);
  }
  const std::size_t rows = records.size();
  std::vector<std::size_t> width;
  for (const auto& [col, title] : shown) {
    std::size_t w = title.size();
    for (std::size_t row = 0; row < rows; ++row) w = std::max(w, cell_text(*col, row).size());
    width.push_back(w);
  }
  std::string out = fmt::format("Sweep {} ({} points of `vramsim {}`){}\n", grid.file, rows,
                                to_string(grid.kind),
                                grid.description.empty() ? "" : ": " + grid.description);
  const auto line = [&](auto cell) {
    std::string text;
    for (std::size_t k = 0; k < shown.size(); ++k) {
      const std::string v = cell(k);
      text += k < 2 + grid.axes.size() ? fmt::format("{:<{}}  ", v, width[k])
                                        : fmt::format("{:>{}}  ", v, width[k]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line([&](std::size_t k) { return shown[k].second; });
  for (std::size_t row = 0; row < rows; ++row) {
    line([&](std::size_t k) { return cell_text(*shown[k].first, row); });
  }
  bool header = false;
  for (const run::PointRecord& r : records) {
    if (r.reason.empty()) continue;
    if (!header) out += "\nNot run to the end:\n";
    header = true;
    std::string reason = r.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    out += fmt::format("  #{} {}: {}\n", r.index, r.status, reason);
  }
  return out;
}

int run_sweep(const SweepFlags& f) {
  ProgressBar progress("points");
  const run::SweepRun s = run::run_sweep(
      {.grid_file = f.grid, .out = f.out, .jobs = f.jobs, .resume = f.resume,
       .command_line = command_line()},
      {.progress = [&progress](std::size_t done, std::size_t total) {
         progress.update(done, total);
       },
       .warning = [](const std::string& message) {
         std::fprintf(stderr, "vramsim sweep: --resume: %s\n", message.c_str());
       }});
  if (s.root) {
    if (f.format == OutputFormat::kJson) {
      std::puts(run::summary_json(s.columns).dump(2).c_str());
    } else {
      std::fputs(summary_text(s).c_str(), stdout);
      if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
    }
  }
  // Errors go to stderr as well, so that a script reading stdout (or a user with stdout in a
  // file) still sees them; the table and the JSON keep them beside the finished points.
  if (s.root) {
    for (const run::PointRecord& r : s.records) {
      if (r.status != run::kStatusError) continue;
      std::string reason = r.reason;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      std::fprintf(stderr, "vramsim sweep: point %lld: error: %s\n",
                   static_cast<long long>(r.index), reason.c_str());
    }
  }
  // Points with bad input are recorded and the sweep goes on; only a sweep where no point could
  // run at all (most likely a bad base scenario) is bad input as a whole.
  return s.any_ran ? kExitOk : kExitBadInput;
}

}  // namespace

RunFn register_sweep(CLI::App& app) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Many serve or train runs over a grid of scenario fields, on local cores or MPI "
               "ranks, into one results file");
  cmd->add_option("grid", f->grid, "Grid file (TOML; see scenarios/sweeps/)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", f->out, "Write the HDF5 results file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
  cmd->add_option("-j,--jobs", f->jobs,
                  "Points run at once on this machine (default: its cores; 1 per MPI rank)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--resume", f->resume,
                "Keep the points an interrupted run of the same --out finished; run the rest");
  add_format_option(*cmd, f->format);
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_sweep(*f);
  };
}

}  // namespace vramsim::cli
