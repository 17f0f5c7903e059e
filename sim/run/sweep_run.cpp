#include "sim/run/sweep_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/sweep_parallel.hpp"
#include "sim/run/train_options.hpp"

namespace vramsim::run {

namespace {

void check_request(const SweepRequest& req) {
  if (req.resume && req.out.empty()) {
    throw ConfigError("--resume", "needs --out: the results file of the run to resume");
  }
  if (req.out.empty()) return;
  const std::filesystem::path dir = req.out.parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw ConfigError("--out", fmt::format("no such directory: {}", dir.string()));
  }
}

/// Rank 0: the records the search returns, after the resumed ones, in index order; writes the
/// results file.
void finish(const SweepRequest& req, std::unique_ptr<Journal> journal, SweepRun& run) {
  std::sort(run.records.begin(), run.records.end(),
            [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  if (!req.out.empty()) {
    write_sweep_file(req.out, run.grid, run.records, req.command_line);
    journal->remove();
  }
  run.columns = summary_columns(run.grid, run.records);
  run.any_ran = std::any_of(run.records.begin(), run.records.end(),
                            [](const PointRecord& r) { return r.status != kStatusError; });
}

}  // namespace

std::vector<PointRecord> reusable_records(const io::SweepGrid& grid,
                                          const std::filesystem::path& out,
                                          const std::function<void(const std::string&)>& warn) {
  std::vector<PointRecord> keep;
  for (PointRecord& r : previous_records(out, warn)) {
    if (r.index < 0 || static_cast<std::size_t>(r.index) >= grid.points.size()) continue;
    if (r.status != kStatusOk && r.status != kStatusInfeasible) continue;
    const io::PointScenario ps =
        io::point_scenario(grid, static_cast<std::size_t>(r.index), "point");
    if (r.scenario_text != ps.text) continue;
    if (const std::string problem = result_shape_problem(grid.kind, r); !problem.empty()) {
      if (warn) warn(fmt::format("point {}: {}; it runs again", r.index, problem));
      continue;
    }
    r.axis_values = ps.axis_values;
    keep.push_back(std::move(r));
  }
  return keep;
}

SweepRun run_sweep(const SweepRequest& req, const SweepCallbacks& cb) {
  const SweepWorld world;
  SweepRun run;
  run.root = world.is_root();
  try {
    check_request(req);
    run.grid =
        io::load_sweep_grid(req.grid_file, serving_scenario_fields(), training_scenario_fields());
    check_point_scenarios(run.grid);
  } catch (const ConfigError&) {
    if (world.is_root()) throw;
    SweepRun other;  // every rank finds the same problems; rank 0 reports them
    other.root = false;
    return other;
  }
  if (world.is_root() && req.resume) run.records = reusable_records(run.grid, req.out, cb.warning);
  std::vector<std::size_t> done;
  for (const PointRecord& r : run.records) done.push_back(static_cast<std::size_t>(r.index));
  SpreadWork w;
  for (std::size_t i = 0; i < run.grid.points.size(); ++i) w.candidates.push_back(i);
  w.done = world.broadcast_indices(done);
  w.threads = search_threads(req.jobs, world);
  const io::SweepGrid& grid = run.grid;
  w.work = [&grid](std::size_t i) { return run_point(grid, i); };
  if (!world.is_root()) {
    spread_points(world, w);
    SweepRun other;
    other.root = false;
    other.any_ran = world.broadcast("") == "1";
    return other;
  }
  std::optional<ConfigError> failure;
  try {
    std::unique_ptr<Journal> journal;
    if (!req.out.empty()) journal = std::make_unique<Journal>(journal_path(req.out), req.resume);
    w.take = [&](PointRecord r) {
      if (journal) journal->append(r);
      run.records.push_back(std::move(r));
    };
    w.progress = cb.progress;
    spread_points(world, w);
    finish(req, std::move(journal), run);
  } catch (const ConfigError& e) {
    failure = e;
    run.any_ran = false;
  }
  world.broadcast(run.any_ran ? "1" : "0");
  if (failure) throw *failure;
  return run;
}

}  // namespace vramsim::run
