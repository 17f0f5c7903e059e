// The option schema of training: one row per setting of a training run (its scenario path, its
// flag, its type and unit, its default and where that default comes from, its help text and its
// validation), and the typed, resolved TrainOptions with the origin of every value.
//
// From the table come: the TOML reader of training scenarios (file or text), the CLI11 options
// of `train`, `capacity train` and `compare train` (sim/cli/train_flags.cpp walks the table),
// the one flags-over-scenario-over-default merge (resolve_train_options), the sweepable fields
// of `sweep` grids, the resolved-inputs record stored in results, and the provenance of errors:
// domain code reports config paths ("batch.global_batch"); problem_at() gives each the
// scenario's file:line or the flag that set it. Adding a setting is one row in
// train_options.cpp, a member of TrainOptions, and the code that uses it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::run {

/// A setting's value as the user wrote it, before conversion (a TOML value, a flag's value).
using RawValue = std::variant<std::string, std::int64_t, bool>;

/// Where a resolved value came from.
enum class OriginKind { kDefault, kScenario, kFlag };
struct Origin {
  OriginKind kind = OriginKind::kDefault;
  SourceLocation where;  // kScenario: the file:line of the value
  std::string flag;      // kFlag: the flag's name as given ("--tp")
};

/// A value written for one setting (by a scenario file or a flag), keyed by scenario path.
struct GivenValue {
  RawValue value;
  Origin origin;
};
using GivenValues = std::map<std::string, GivenValue, std::less<>>;

/// Every training setting, typed and resolved, with where each value came from.
struct TrainOptions {  // defaults: TrainingPlan's, so they are written once
  std::string model;        // model.id: zoo id or config.json path
  std::string gpu;          // hardware.gpu: device id
  std::int64_t num_gpus = training::TrainingPlan{}.num_gpus;
  std::int64_t gpus_per_node = 0;  // 0: the topology's node, else min(num_gpus, 8)
  std::string topology;     // node id, node file or cluster file; "" for none
  std::string calibration;  // calibration profile path; "" for the datasheet roofline
  training::Strategy strategy = training::TrainingPlan{}.strategy;
  std::int64_t tp = training::TrainingPlan{}.tp;
  std::int64_t pp = training::TrainingPlan{}.pp;
  training::PipelineSchedule pp_schedule = training::TrainingPlan{}.schedule;
  std::int64_t pp_interleave = training::TrainingPlan{}.pp_interleave;
  bool sequence_parallel = training::TrainingPlan{}.sequence_parallel;
  std::int64_t micro_batch = training::TrainingPlan{}.micro_batch;
  std::int64_t global_batch = training::TrainingPlan{}.global_batch;  // 0: micro_batch x dp
  std::int64_t seq_len = training::TrainingPlan{}.seq_len;
  training::Checkpointing checkpointing = training::TrainingPlan{}.checkpointing;
  training::Precision precision = training::TrainingPlan{}.precision;
  training::Optimizer optimizer = training::TrainingPlan{}.optimizer;
  bool offload_optimizer = training::TrainingPlan{}.offload_optimizer;
  Bytes ddp_bucket_cap = training::TrainingPlan{}.ddp_bucket;

  std::string scenario_file;  // "" without a scenario
  std::string scenario_text;  // the whole scenario, stored in results files
  std::map<std::string, Origin, std::less<>> origins;  // by path; absent: the default

  /// Where `path`'s value came from (kDefault when not recorded).
  Origin origin(std::string_view path) const;
};

/// The TOML type of a setting (and of its flag). kBytes: a string with a byte unit ("25MiB",
/// "1GB": sim/core/units.hpp parse_bytes, binary and decimal prefixes kept apart), resolved to
/// Bytes and read back in the largest binary unit that holds it exactly.
enum class ValueKind { kString, kInt, kBool, kBytes };

/// How a string setting that names a file is read relative to the scenario's folder.
enum class PathRule {
  kNone,      // not a path
  kFile,      // always a path
  kFileOrId,  // a path when it has a folder or ends in .toml; else an id kept as written
};

/// One row of the schema.
struct TrainOptionRow {
  std::string_view path;  // scenario path: "parallel.tp"
  std::string_view flag;  // "--tp"
  ValueKind kind;
  std::string_view unit;            // "GPUs", "sequences", "tokens"; "" when none
  std::string_view default_source;  // where the default (TrainOptions' initial value) comes from
  std::string_view help;  // for an enum, what it is; the names come from `names`
  PathRule path_rule;
  std::string_view (*names)();  // the valid names of an enum setting; nullptr otherwise
  /// Converts and stores `v` (of `kind`); returns the problem when the value is invalid.
  std::optional<std::string> (*set)(TrainOptions& o, const RawValue& v);
  /// The resolved value in the row's raw form (round-trips through set).
  RawValue (*get)(const TrainOptions& o);
};

/// The schema, in scenario order.
std::span<const TrainOptionRow> train_option_rows();
/// The help of `row` as printed: its text, an enum's valid names, the default when it is
/// TrainingPlan's and not a boolean flag's ("Tensor-parallel degree (Megatron) (default: 1)").
std::string help_text(const TrainOptionRow& row);
/// The row of a scenario path or a flag; nullptr when none.
const TrainOptionRow* find_train_option(std::string_view path_or_flag);

/// The values a training scenario writes, read with the schema. `text` is named `name` in
/// messages; relative paths are taken relative to `base_dir`. Throws ConfigError with every
/// problem at its file:line, unknown keys with "did you mean".
struct TrainScenario {
  std::string file;
  std::string text;
  GivenValues values;
};
TrainScenario load_train_scenario(const std::filesystem::path& file);
TrainScenario load_train_scenario_text(std::string_view text, std::string name,
                                       const std::filesystem::path& base_dir = {});

/// The one merge: per setting, the flag, else the scenario, else the default; every value is
/// converted and validated by its row and its origin recorded. `model.id` and `hardware.gpu`
/// are required. Throws ConfigError with every problem, each at its origin (problem_at).
TrainOptions resolve_train_options(const TrainScenario& scenario, const GivenValues& flags = {});

/// A problem about the setting at `path`, at its origin: the scenario's file:line when the
/// scenario set it; otherwise no location, the field staying the path (the command line names
/// the flag instead, see sim/cli/train_flags.hpp).
Problem problem_at(const TrainOptions& o, std::string_view path, std::string message);
/// Every problem of `report` whose field is a schema path and which has no location yet, given
/// the scenario's file:line when the scenario set that setting.
ValidationReport located(const TrainOptions& o, const ValidationReport& report);

/// The fields a sweep grid may set in training scenarios (every row), and those holding paths.
io::ScenarioFields training_scenario_fields();

/// The resolved inputs, one entry per row: {"path": {"value": ..., "origin": "default" |
/// "file:line" | "--flag"}}, stored in results.
nlohmann::ordered_json resolved_inputs_json(const TrainOptions& o);

}  // namespace vramsim::run
