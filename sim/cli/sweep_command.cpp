// `vramsim sweep GRID.toml`: many serve or train runs, one per point of a grid (a Cartesian
// product of scenario fields, or listed points), over local cores and, under mpirun or srun,
// over MPI ranks; results in one HDF5 file, resumable.
//
// Flow: every rank reads and checks the grid (bad input: exit 2 before anything runs); rank 0
// finds the points an earlier run finished (--resume) and tells the others; the remaining
// points are dealt round-robin over the ranks, and each rank runs its share on -j threads.
// Rank 0 collects every record (its own threads' and the other ranks' messages), journals it
// and draws the progress bar; at the end it writes the results file and prints the summary.
//
// Exit codes: 2 for a bad grid (before any point runs); otherwise 0, even when some points are
// infeasible or refused as bad input (each recorded with its reason: a sweep over combinations
// meets some that cannot run), unless every point was refused (then the base scenario is most
// likely wrong): 2, with the file still written.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "sim/cli/commands.hpp"
#include "sim/cli/sweep_output.hpp"
#include "sim/cli/sweep_parallel.hpp"
#include "sim/cli/sweep_point.hpp"
#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/train_options.hpp"

namespace vramsim::cli {

namespace {

struct SweepFlags {
  std::string grid, out;
  int jobs = 0;
  bool resume = false;
  OutputFormat format = OutputFormat::kTable;
};

/// "[#####-----] 12/48 points, 3.2/s, 11s left" on stderr, redrawn at most ten times a second.
class Progress {
 public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled) {}
  void tick() {
    ++done_;
    if (!enabled_) return;
    const double t = elapsed_s();
    if (done_ < total_ && t - last_draw_s_ < 0.1) return;
    last_draw_s_ = t;
    const double rate = t > 0.0 ? static_cast<double>(done_) / t : 0.0;
    const double left = rate > 0.0 ? static_cast<double>(total_ - done_) / rate : 0.0;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ == 0 ? kWidth : kWidth * done_ / total_;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu points, %.1f/s, %.0fs left  ",
                 std::string(filled, '#').c_str(), std::string(kWidth - filled, '-').c_str(),
                 done_, total_, rate, left);
    if (done_ == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  double last_draw_s_ = -1.0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// Records of an earlier run that this grid would produce again: same index, same scenario
/// text, and run to the end (ok or infeasible; errors are run again).
std::vector<PointRecord> reusable_records(const io::SweepGrid& grid,
                                          const std::filesystem::path& out) {
  std::vector<PointRecord> keep;
  for (PointRecord& r : previous_records(out)) {
    if (r.index < 0 || static_cast<std::size_t>(r.index) >= grid.points.size()) continue;
    if (r.status != kStatusOk && r.status != kStatusInfeasible) continue;
    const io::PointScenario ps =
        io::point_scenario(grid, static_cast<std::size_t>(r.index), "point");
    if (r.scenario_text != ps.text) continue;
    r.axis_values = ps.axis_values;
    keep.push_back(std::move(r));
  }
  return keep;
}

std::string encode_indices(const std::vector<PointRecord>& records) {
  std::string out;
  for (const PointRecord& r : records) out += fmt::format("{} ", r.index);
  return out;
}

std::set<std::size_t> decode_indices(const std::string& text) {
  std::set<std::size_t> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find(' ', pos);
    out.insert(std::stoull(text.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

void check_out(const SweepFlags& f) {
  if (f.resume && f.out.empty()) {
    throw ConfigError("--resume", "needs --out: the results file of the run to resume");
  }
  if (f.out.empty()) return;
  const std::filesystem::path dir = std::filesystem::path(f.out).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw ConfigError("--out", fmt::format("no such directory: {}", dir.string()));
  }
}

/// Rank 0: collects every record, journals it, writes the file and prints the summary.
int collect_and_report(const SweepFlags& f, const io::SweepGrid& grid, const SweepWorld& world,
                       PointPool& pool, std::vector<PointRecord> records, std::size_t expected) {
  std::unique_ptr<Journal> journal;
  if (!f.out.empty()) journal = std::make_unique<Journal>(journal_path(f.out), f.resume);
  Progress progress(expected, ::isatty(STDERR_FILENO) == 1);
  const auto take = [&](PointRecord r) {
    if (journal) journal->append(r);
    records.push_back(std::move(r));
    progress.tick();
  };
  const auto wait = std::chrono::milliseconds(world.size() > 1 ? 2 : 200);
  for (std::size_t received = 0; received < expected;) {
    if (std::optional<PointRecord> r = pool.next(wait)) {
      take(std::move(*r));
      ++received;
    }
    while (std::optional<std::string> message = world.poll()) {
      std::optional<PointRecord> r = record_from_json(*message);
      VRAMSIM_CHECK(r.has_value(), "a rank sent a malformed sweep record");
      take(std::move(*r));
      ++received;
    }
  }
  std::sort(records.begin(), records.end(),
            [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  if (!f.out.empty()) {
    write_sweep_file(f.out, grid, records, command_line());
    journal->remove();
  }
  const std::vector<SummaryColumn> columns = summary_columns(grid, records);
  if (f.format == OutputFormat::kJson) {
    std::puts(summary_json(columns).dump(2).c_str());
  } else {
    std::fputs(summary_text(grid, columns, records).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  // Points with bad input are recorded and the sweep goes on; only a sweep where no point could
  // run at all (most likely a bad base scenario) is bad input as a whole.
  const bool any_ran = std::any_of(records.begin(), records.end(), [](const PointRecord& r) {
    return r.status != kStatusError;
  });
  return any_ran ? kExitOk : kExitBadInput;
}

int run_sweep(const SweepFlags& f) {
  const SweepWorld world;
  io::SweepGrid grid;
  try {
    check_out(f);
    grid = io::load_sweep_grid(f.grid, run::serving_scenario_fields(),
                              run::training_scenario_fields());
    check_point_scenarios(grid);
  } catch (const ConfigError&) {
    if (!world.is_root()) return kExitBadInput;  // every rank finds the same problems
    throw;
  }
  std::vector<PointRecord> done;
  if (world.is_root() && f.resume) done = reusable_records(grid, f.out);
  const std::set<std::size_t> skip = decode_indices(world.broadcast(encode_indices(done)));
  std::vector<std::size_t> remaining;
  for (std::size_t i = 0; i < grid.points.size(); ++i) {
    if (skip.count(i) == 0) remaining.push_back(i);
  }
  std::vector<std::size_t> mine;
  for (std::size_t k = 0; k < remaining.size(); ++k) {
    if (k % static_cast<std::size_t>(world.size()) == static_cast<std::size_t>(world.rank())) {
      mine.push_back(remaining[k]);
    }
  }
  const int threads =
      f.jobs > 0 ? f.jobs
                 : (world.size() > 1 ? 1 : static_cast<int>(std::thread::hardware_concurrency()));
  PointPool pool(mine, threads, [&grid](std::size_t i) { return run_point(grid, i); });
  if (!world.is_root()) {
    while (pool.pending() > 0) {
      if (std::optional<PointRecord> r = pool.next(std::chrono::milliseconds(200))) {
        world.send_to_root(record_to_json(*r));
      }
    }
    return std::stoi(world.broadcast(""));
  }
  int code = kExitBadInput;
  std::optional<ConfigError> failure;
  try {
    code = collect_and_report(f, grid, world, pool, std::move(done), remaining.size());
  } catch (const ConfigError& e) {
    failure = e;
  }
  world.broadcast(std::to_string(code));
  if (failure) throw *failure;
  return code;
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
  cmd->add_option("--out", f->out, "Write the HDF5 results file (see analysis/SCHEMA.md)");
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
