// Sweep grid files (`vramsim sweep GRID.toml`): a base scenario plus the fields that vary, and
// the scenario of each point, built as TOML text whose every line remembers where the user
// wrote its value (the base scenario file or the grid file), so that a problem found while a
// point runs is reported at that file:line.
//
//   description = "Llama-3.1-8B: which GPU, how much TP, up to what rate"
//   command = "serve"                      # or "train": which simulation each point runs
//   scenario = "../serving/small.toml"     # the base scenario, relative to this file
//   [base.workload]                        # optional: fields set for every point (inline base)
//   num_requests = 200
//   [grid]                                 # axes: the Cartesian product, first axis slowest
//   "hardware.gpu" = ["h100-sxm", "a100-sxm-80g"]
//   "engine.tp" = [1, 2]
//   "workload.rate" = [2.0, 4.0, 8.0]
//   [[points]]                             # explicit points, run after the product
//   "hardware.gpu" = "l40s"
//   "engine.tp" = 4
//
// A field is any scenario field of the command, written as a quoted dotted key or as nested
// tables ([grid.engine] tp = [1, 2]). Axes keep the order in which the file writes them. The
// points are the product of [grid] (none without axes) followed by every [[points]] entry.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"

namespace vramsim::io {

enum class SweepKind { kServe, kTrain };
/// The sweep file's `command`.
inline constexpr auto kSweepKinds = enum_table<SweepKind>({
    {SweepKind::kServe, "serve", "every point is a `vramsim serve` run"},
    {SweepKind::kTrain, "train", "every point is a `vramsim train` run"},
});
static_assert(covers_every_enumerator(kSweepKinds) && names_are_unique(kSweepKinds));

std::string_view to_string(SweepKind kind);
std::optional<SweepKind> sweep_kind_from_string(std::string_view text);

/// One scenario field set by the grid: its dotted path, its value, and where it is written.
struct FieldValue {
  std::string field;    // "engine.tp"
  std::string toml;     // the value as TOML text: 2, 'h100-sxm', 4.5
  std::string display;  // as shown in summary tables: 2, h100-sxm, 4.5
  SourceLocation where;
};

struct SweepPoint {
  std::vector<FieldValue> values;  // the fields this point sets
  SourceLocation where;            // the [grid] table or the [[points]] entry
};

/// The fields scenarios of a kind may set ("batch.seq_len"), and those holding a path (made
/// absolute, relative to the file that wrote them: a point's text is not in the scenario's
/// folder). Both come from the option schemas (run::serving_scenario_fields() and
/// run::training_scenario_fields(), above io).
struct ScenarioFields {
  std::vector<std::string> fields;
  std::vector<std::string> path_fields;
};

struct SweepGrid {
  std::string file;  // as given
  std::string text;  // the whole grid file
  std::string description;
  SweepKind kind = SweepKind::kServe;
  std::string base_file;  // the base scenario file ("" when the base is only inline)
  std::string base_text;
  std::vector<FieldValue> base_values;  // [base], flattened
  std::vector<std::string> axes;        // the fields that vary, in column order
  std::vector<SweepPoint> points;
  std::vector<std::string> path_fields;  // fields holding a path, for point_scenario
};

/// Reads a grid file and its base scenario. Throws ConfigError listing every problem with its
/// file:line: syntax, a missing or unknown command, a missing base scenario, an axis that is not
/// a non-empty list, and a field the command's scenarios do not have (the message names the
/// valid fields). Value types are checked when a point's scenario is loaded. `serving`,
/// `training`: the fields of each kind's scenarios.
SweepGrid load_sweep_grid(const std::filesystem::path& file, const ScenarioFields& serving,
                          const ScenarioFields& training);

/// Every field a scenario of `kind` may set ("engine.tp"), sorted.
std::vector<std::string> sweep_fields(SweepKind kind, const ScenarioFields& serving,
                                      const ScenarioFields& training);

/// The scenario of one point: the base scenario with the point's fields set.
struct PointScenario {
  std::string name;  // stands for the file in messages until relocate()
  std::string text;  // TOML; a relative workload.trace / hardware.topology is made absolute
  std::vector<std::string> axis_values;  // display value of each grid axis ("" when unset)
  std::vector<SourceLocation> line_origins;  // where line i+1 of `text` was written
  // The folder a relative model path (model.id = "c.json") is read against, as `vramsim serve`
  // reads it against its scenario's: the base scenario's folder, else the grid file's.
  std::filesystem::path base_dir;
  SourceLocation point_location;             // the point's place in the grid file

  /// Where the user wrote what `at` points to: a location in `name` becomes the base scenario's
  /// or the grid's file:line; any other location is returned unchanged.
  SourceLocation origin(const SourceLocation& at) const;
  /// Rewrites every problem's location with origin().
  void relocate(ValidationReport& report) const;
};

/// Builds point `index` (< grid.points.size()) of `grid`; `name` stands for its text in
/// messages (the caller may write the text to a file of that name). Throws ConfigError (at the
/// grid's file:line) when a field cannot be set, e.g. a base value where a table is needed.
PointScenario point_scenario(const SweepGrid& grid, std::size_t index, std::string name);

}  // namespace vramsim::io
