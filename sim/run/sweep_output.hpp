// What a sweep makes of its point records: the summary (one row per point) as typed columns and
// as JSON, and in the HDF5 results file (analysis/SCHEMA.md, "vramsim sweep"); the journal that
// keeps finished points durable while the sweep runs; and the records a previous, interrupted
// run left behind, for --resume. The table for people is the command line's
// (sim/cli/sweep_command.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sim/io/results_types.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/io/typed_columns.hpp"
#include "sim/run/sweep_point.hpp"

namespace vramsim::run {

/// One column of the summary. Missing values (a metric an infeasible or failed point does not
/// have) are -1 in int64 columns, NaN in float64 ones and "" in string ones; `present` tells.
struct SummaryColumn {
  std::string name;
  io::ColumnType type = io::ColumnType::kInt64;
  std::string units;
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string> strings;
  std::vector<bool> present;
};

/// The quantities of the numbers of a point's result: serve_summary_schema() for serve, the
/// declared numbers of train_json for train.
const io::FieldSchema& result_schema(io::SweepKind kind);
/// The quantities of the numbers of one entry of train_json's `devices`, `at_peak` flattened
/// to `at_peak_<category>_bytes`.
const io::FieldSchema& train_device_schema();

/// What is wrong with the shape of a finished point's result read back for --resume, or "" when
/// nothing is: a serve point that did not fit must hold {"budget": {...}}; every number the
/// result schema declares must be a JSON number (an integer, or true/false, where the quantity
/// is an integer). Only "ok" and "infeasible" records have results to check.
std::string result_shape_problem(io::SweepKind kind, const PointRecord& r);

/// point_index, status, reason, one string column per axis, then the numeric (and, for train,
/// string) top-level fields of the points' results, in the order the results give them. A
/// number's type and units come from result_schema (never from its name); a number the schema
/// does not declare is left out (it stays in the point's result_json).
/// `records` must be sorted by index.
std::vector<SummaryColumn> summary_columns(const io::SweepGrid& grid,
                                           const std::vector<PointRecord>& records);

/// {"points": [{column: value, ...}, ...]}; missing values are null.
nlohmann::ordered_json summary_json(const std::vector<SummaryColumn>& columns);

/// The step-time model the points were simulated with, for the file's calibration_source: a
/// serve point's cost_model (its result's inputs), a train point's calibration_source. Points
/// that did not simulate (errors, serve points whose weights do not fit) name none. One model
/// for every point that names one: that model; several: "mixed: " and each, in order of first
/// appearance, separated by "; "; none at all: "none (no point was simulated)".
std::string sweep_cost_model(const std::vector<PointRecord>& records);

/// Writes the results file (crash-safe: temp + rename). `records` sorted by index.
void write_sweep_file(const std::filesystem::path& out, const io::SweepGrid& grid,
                      const std::vector<PointRecord>& records, const std::string& command_line);

/// The side file that keeps finished points while a sweep runs: `<out>.journal`.
std::filesystem::path journal_path(const std::filesystem::path& out);

/// Appends records, one JSON line each. Lines reach the OS as each point finishes (they
/// survive the process being killed); fsync follows at most every quarter second and on
/// close (bounding what a power loss can take).
class Journal {
 public:
  /// Opens (creating) the journal; `keep` keeps what it holds, otherwise it is emptied.
  Journal(std::filesystem::path path, bool keep);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void append(const PointRecord& r);
  /// Closes and deletes the journal (the results file now holds everything).
  void remove();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  double last_sync_s_ = 0.0;
};

/// The records of an earlier run of the same output: those of the results file `out` (when it
/// exists) and of its journal, the journal's winning for the same index. Unreadable parts are
/// skipped (a torn last journal line, a results file that is not one); `warn` (may be empty)
/// is told about each part skipped but a torn journal line, with why.
std::vector<PointRecord> previous_records(
    const std::filesystem::path& out, const std::function<void(const std::string&)>& warn);

}  // namespace vramsim::run
