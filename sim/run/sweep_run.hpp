// The run layer of `vramsim sweep`: a grid file -> every point simulated (as `vramsim serve` or
// `vramsim train` would) on local threads and, under mpirun or srun, over MPI ranks -> the
// records, journaled while they arrive and written to one HDF5 results file. Callable without
// the command line; the CLI (sim/cli/sweep_command.cpp) parses flags, draws the progress and
// prints the table.
//
// Flow: every rank reads and checks the grid (bad input: ConfigError before anything runs);
// rank 0 finds the points an earlier run finished (resume) and tells the others; the remaining
// points are dealt round-robin over the ranks, and each rank runs its share on `jobs` threads.
// Rank 0 collects every record (its own threads' and the other ranks' messages), journals it,
// and at the end writes the results file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sim/io/sweep_grid.hpp"
#include "sim/run/sweep_output.hpp"
#include "sim/run/sweep_point.hpp"

namespace vramsim::run {

/// What to sweep. Problems with it are reported under the names of `vramsim sweep`'s flags.
struct SweepRequest {
  std::filesystem::path grid_file;
  std::filesystem::path out;  // the results file (and `<out>.journal` meanwhile); empty: none
  int jobs = 0;               // points run at once here; 0: every core, or 1 per MPI rank
  bool resume = false;        // keep the points an earlier run of `out` finished (needs out)
  std::string command_line;   // recorded in the results file
};

/// What a sweep tells while it runs (on rank 0 only); either may be empty.
struct SweepCallbacks {
  /// `done` of the `total` points left to run have finished; called with done == 0 once when
  /// they start, then after each.
  std::function<void(std::size_t done, std::size_t total)> progress;
  /// A part of an earlier run's output that resume could not read, and why.
  std::function<void(const std::string& message)> warning;
};

struct SweepRun {
  /// Whether this process holds the results (rank 0, or the only process). On other ranks
  /// grid, records and columns are empty and only any_ran is set.
  bool root = true;
  io::SweepGrid grid;
  std::vector<PointRecord> records;    // every point's, sorted by index (resumed ones too)
  std::vector<SummaryColumn> columns;  // summary_columns(grid, records)
  /// Whether some point was not refused as bad input. A sweep where none could run has most
  /// likely a bad base scenario (the results file is still written).
  bool any_ran = false;
};

/// Runs the sweep. Throws ConfigError on rank 0 for a bad grid or request (before any point
/// runs) and when the journal or the results file cannot be written; other ranks then return
/// root == false with any_ran == false. A point's own problems never throw: they are records
/// (kStatusInfeasible, kStatusError with the grid's or base scenario's file:line).
SweepRun run_sweep(const SweepRequest& request, const SweepCallbacks& callbacks = {});

/// Records of an earlier run of `out` that `grid` would produce again: same index, same
/// scenario text, and run to the end (ok or infeasible; errors are run again), sorted by index.
std::vector<PointRecord> reusable_records(
    const io::SweepGrid& grid, const std::filesystem::path& out,
    const std::function<void(const std::string&)>& warn = {});

}  // namespace vramsim::run
