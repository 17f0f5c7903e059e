// One point of `vramsim sweep`: its scenario, simulated as `vramsim serve` or `vramsim train`
// would, and the outcome as a self-contained record (the unit that is journaled, sent between
// MPI ranks, read back on --resume, and written to the results file).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/sweep_grid.hpp"

namespace vramsim::run {

inline constexpr std::string_view kStatusOk = "ok";
inline constexpr std::string_view kStatusInfeasible = "infeasible";  // does not fit
inline constexpr std::string_view kStatusError = "error";            // bad input (ConfigError)

struct PointRecord {
  std::int64_t index = 0;
  std::string status;
  std::string reason;                     // why infeasible, or the error; "" when ok
  std::vector<std::string> axis_values;   // display value of each grid axis
  std::string scenario_text;              // the point's scenario (TOML)
  /// serve: serve_json (ok) or {"budget": budget_json} (infeasible); train: train_json;
  /// null for errors.
  nlohmann::ordered_json result;
};

/// Runs point `index` of `grid`. Never throws for bad input: a ConfigError (or any other
/// exception the simulators raise for input they refuse) becomes an "error" record whose reason
/// lists the problems at the base scenario's or the grid's file:line.
PointRecord run_point(const io::SweepGrid& grid, std::size_t index);

/// The scenario text of point `index`, as run_point would record it (to match a resumed point
/// against the grid). Throws ConfigError like io::point_scenario.
std::string point_scenario_text(const io::SweepGrid& grid, std::size_t index);

/// Loads every point's scenario without simulating, so that value types and unknown keys are
/// reported (all of them, relocated to the user's file:line) before anything runs. Throws
/// ConfigError.
void check_point_scenarios(const io::SweepGrid& grid);

/// One JSON object per record (compact, one line); from_json gives it back exactly, or nullopt
/// for a line that is not a whole record of the right shape: a journal torn by a crash, or one
/// edited by hand (every key present with its type: index a non-negative integer, status one of
/// ok / infeasible / error, reason and scenario_text strings, axis_values strings, result an
/// object for ok and infeasible and null for error). `why` (may be null) is told what is wrong.
std::string record_to_json(const PointRecord& r);
std::optional<PointRecord> record_from_json(std::string_view line, std::string* why = nullptr);

/// A search's inputs as 16 hex digits: every row of `resolved_inputs` (resolved_inputs_json)
/// with its value, then `extra`. A plan search keys its journal records by it, so that --resume
/// reuses only records of the same inputs. FNV-1a: a digest, not a security measure.
std::string inputs_fingerprint(const nlohmann::ordered_json& resolved_inputs,
                               std::string_view extra = {});

/// The JSON types a journaled record's result must hold, key by key.
struct ResultShape {
  std::vector<const char*> integers;
  std::vector<const char*> numbers;  // integer or floating point
  std::vector<const char*> strings;
  std::vector<const char*> booleans;
};
/// Whether `j` is an object holding every key of `shape` with its type.
bool has_shape(const nlohmann::ordered_json& j, const ResultShape& shape);

}  // namespace vramsim::run
