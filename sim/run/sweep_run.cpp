#include "sim/run/sweep_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <thread>
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

/// Rank 0: collects every record into `run.records` (after the resumed ones), journals each,
/// then writes the results file.
void collect(const SweepRequest& req, const SweepCallbacks& cb, const SweepWorld& world,
             PointPool& pool, std::size_t expected, SweepRun& run) {
  std::unique_ptr<Journal> journal;
  if (!req.out.empty()) journal = std::make_unique<Journal>(journal_path(req.out), req.resume);
  std::size_t received = 0;
  if (cb.progress) cb.progress(0, expected);
  const auto take = [&](PointRecord r) {
    if (journal) journal->append(r);
    run.records.push_back(std::move(r));
    ++received;
    if (cb.progress) cb.progress(received, expected);
  };
  const auto wait = std::chrono::milliseconds(world.size() > 1 ? 2 : 200);
  while (received < expected) {
    if (std::optional<PointRecord> r = pool.next(wait)) take(std::move(*r));
    while (std::optional<std::string> message = world.poll()) {
      std::optional<PointRecord> r = record_from_json(*message);
      VRAMSIM_CHECK(r.has_value(), "a rank sent a malformed sweep record");
      take(std::move(*r));
    }
  }
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
  const std::set<std::size_t> skip = world.broadcast_indices(done);
  std::vector<std::size_t> remaining;
  for (std::size_t i = 0; i < run.grid.points.size(); ++i) {
    if (skip.count(i) == 0) remaining.push_back(i);
  }
  std::vector<std::size_t> mine;
  for (std::size_t k = 0; k < remaining.size(); ++k) {
    if (k % static_cast<std::size_t>(world.size()) == static_cast<std::size_t>(world.rank())) {
      mine.push_back(remaining[k]);
    }
  }
  const int threads =
      req.jobs > 0 ? req.jobs
                   : (world.size() > 1 ? 1 : static_cast<int>(std::thread::hardware_concurrency()));
  const io::SweepGrid& grid = run.grid;
  PointPool pool(mine, threads, [&grid](std::size_t i) { return run_point(grid, i); });
  if (!world.is_root()) {
    while (pool.pending() > 0) {
      if (std::optional<PointRecord> r = pool.next(std::chrono::milliseconds(200))) {
        world.send_to_root(record_to_json(*r));
      }
    }
    SweepRun other;
    other.root = false;
    other.any_ran = world.broadcast("") == "1";
    return other;
  }
  std::optional<ConfigError> failure;
  try {
    collect(req, cb, world, pool, remaining.size(), run);
  } catch (const ConfigError& e) {
    failure = e;
    run.any_ran = false;
  }
  world.broadcast(run.any_ran ? "1" : "0");
  if (failure) throw *failure;
  return run;
}

}  // namespace vramsim::run
