// The machinery of an option schema: one row per setting (its scenario path, its flag and vLLM's
// spelling of it, its type and unit, its default and where that default comes from, its help text
// and its validation), shared by the serving schema (serve_options.hpp) and the training schema
// (train_options.hpp).
//
// From a schema's rows come: the TOML reader of its scenarios (file or text), the CLI11 options of
// its commands (sim/cli/schema_flags.hpp walks the rows), the one flags-over-scenario-over-default
// merge (resolve_options), the sweepable fields, the resolved-inputs record stored in results,
// and the provenance of errors: domain code reports config paths ("engine.max_num_seqs");
// problem_at() gives each the scenario's file:line, and the command line names the flag of a
// path no scenario set. Adding a setting is one row, a member of the options struct, and the code
// that uses it.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/io/toml_reader.hpp"

namespace vramsim::run {

/// A setting's value as the user wrote it, before conversion (a TOML value, a flag's value);
/// monostate: no value (an optional setting left unset).
using RawValue = std::variant<std::monostate, std::string, std::int64_t, bool, double>;

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

/// The TOML type of a setting (and of its flag). kBytes: a string with a byte unit ("25MiB",
/// "1GB": sim/core/units.hpp parse_bytes, binary and decimal prefixes kept apart); kDuration: a
/// string with a time unit ("2s", "100ms"). Both are read back in the largest unit that holds
/// the value exactly.
enum class ValueKind { kString, kInt, kBool, kBytes, kDouble, kDuration };

/// The bounds every row of a schema gets from the machinery, checked on every value a scenario or
/// a flag gives, before the row's own validation, so that no size or count can wrap the products
/// the budget and the simulators form from it (tokens x bytes per token, blocks x block bytes):
/// - kInt: at most kMaxCount, 2^31 - 1. vLLM holds token positions, block ids and block tables
///   in int32 tensors (vllm/v1/worker/block_table.py), so no engine setting exceeds it, and a
///   count this size times any model dimension (< 2^24) times bytes per element stays far inside
///   int64. A row may declare a larger bound (the seed: any int64).
/// - kBytes: at most kMaxBytes, 1 PiB (a thousand times the largest device's memory).
/// - kDouble: a finite number (TOML and flags both spell inf and nan).
/// - kString: not empty ("--trace $UNSET" must not silently mean "no trace").
inline constexpr std::int64_t kMaxCount = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;
inline constexpr std::int64_t kNoIntBound = std::numeric_limits<std::int64_t>::max();

/// How a string setting that names a file is read relative to the scenario's folder.
enum class PathRule {
  kNone,      // not a path
  kFile,      // always a path
  kFileOrId,  // a path when it has a folder or ends in .toml; else an id kept as written
  // A model: a path when it ends in .json, starts with ./ or ../, or names a file or folder
  // in the scenario's folder; else a model id ("org/name") kept as written. Not a sweep path
  // field (a sweep would make an id absolute).
  kModel,
};

/// What every resolved option set records besides its values: the scenario it read, and where
/// each value came from. TrainOptions and ServeOptions derive from it.
struct ResolvedOrigins {
  std::string scenario_file;  // "" without a scenario
  std::string scenario_text;  // the whole scenario, stored in results files
  std::map<std::string, Origin, std::less<>> origins;  // by path; absent: the default

  /// Where `path`'s value came from (kDefault when not recorded).
  Origin origin(std::string_view path) const;
  /// True when a scenario or a flag set `path`.
  bool given(std::string_view path) const { return origin(path).kind != OriginKind::kDefault; }
};

/// One row of a schema over the options struct `Options`.
template <class Options>
struct OptionRow {
  std::string_view path;  // scenario path: "engine.tp"
  std::string_view flag;  // "--tp"
  ValueKind kind;
  std::string_view unit;            // "GPUs", "tokens"; "" when none
  std::string_view default_source;  // where the default (Options' initial value) comes from
  std::string_view help;            // for an enum, what it is; the names come from `names`
  PathRule path_rule;
  std::string_view (*names)();  // the valid names of an enum setting; nullptr otherwise
  /// Converts and stores `v` (of `kind`); returns the problem when the value is invalid.
  std::optional<std::string> (*set)(Options& o, const RawValue& v);
  /// The resolved value in the row's raw form (round-trips through set).
  RawValue (*get)(const Options& o);
  std::string_view alias = {};  // the flag's second spelling (vLLM's): "--tensor-parallel-size"
  std::string_view group = {};  // the help group of its flag; "" for the command's own options
  std::int64_t max_int = kMaxCount;  // kInt: the largest value accepted (kNoIntBound: any int64)
};

/// The values a scenario writes, read with a schema.
struct ScenarioValues {
  std::string file;
  std::string text;
  GivenValues values;
};

namespace detail {
/// The value of `kind` at `path` of `r` (problems recorded in `r`), a string made relative to
/// `base_dir` under `rule`; nullopt when absent or invalid.
std::optional<RawValue> read_raw(io::TomlReader& r, std::string_view path, ValueKind kind,
                                 PathRule rule, const std::filesystem::path& base_dir);
/// Declares the tables of `paths` (the part before the first '.') and `description` in `r`.
void declare_tables(io::TomlReader& r, const std::vector<std::string_view>& paths);
/// The "(default: X)" of a help text, or "" when the default is not worth printing.
std::string default_note(const RawValue& v, ValueKind kind, std::string_view help);
/// The problem when `v` (of `kind`) is outside the machinery's bounds (kMaxCount or `max_int`,
/// kMaxBytes, finite numbers); nullopt when inside.
std::optional<std::string> bound_problem(const RawValue& v, ValueKind kind, std::int64_t max_int);
/// The bound of a row as its help prints it ("; at most 2147483647"); "" when none.
std::string bound_note(ValueKind kind, std::int64_t max_int);
/// {"value": ..., "origin": ..., "source": ...} of one setting.
nlohmann::ordered_json inputs_entry(const RawValue& v, const Origin& at,
                                    std::string_view default_source);
}  // namespace detail

/// `text` as a RawValue of `kind` (a flag's text or a test's): kInt and kDouble parsed as
/// numbers, kBool as true/false; the strings kept. nullopt when it does not parse.
std::optional<RawValue> raw_from_text(std::string_view text, ValueKind kind);
/// The raw value as TOML text (a sweep axis value): strings quoted, numbers and booleans bare.
std::string raw_to_toml(const RawValue& v);

/// The help of `row` as printed: its text, an enum's valid names, its default when that is a
/// plain value, and the machinery's bound ("Tensor-parallel degree (default: 1) [at most
/// 2147483647]").
template <class O>
std::string help_text(const OptionRow<O>& row) {
  std::string out(row.help);
  if (row.names != nullptr) out += ": " + std::string(row.names());
  return out + detail::default_note(row.get(O{}), row.kind, row.help) +
         detail::bound_note(row.kind, row.max_int);
}

/// The row of a scenario path or a flag (either spelling); nullptr when none.
template <class O>
const OptionRow<O>* find_option(std::span<const OptionRow<O>> rows,
                                std::string_view path_or_flag) {
  for (const OptionRow<O>& row : rows) {
    if (row.path == path_or_flag || row.flag == path_or_flag ||
        (!row.alias.empty() && row.alias == path_or_flag)) {
      return &row;
    }
  }
  return nullptr;
}

/// Reads a scenario with the schema: every row's value with its file:line, relative paths
/// taken relative to `base_dir`. Throws ConfigError with every problem at its file:line, unknown
/// keys with "did you mean".
template <class O>
ScenarioValues read_scenario_values(std::span<const OptionRow<O>> rows, io::TomlReader r,
                                    std::string text, const std::filesystem::path& base_dir) {
  ScenarioValues s;
  s.file = r.source_name();
  s.text = std::move(text);
  std::vector<std::string_view> paths;
  for (const OptionRow<O>& row : rows) paths.push_back(row.path);
  detail::declare_tables(r, paths);
  for (const OptionRow<O>& row : rows) {
    if (auto v = detail::read_raw(r, row.path, row.kind, row.path_rule, base_dir)) {
      s.values.emplace(std::string(row.path),
                       GivenValue{*v, {OriginKind::kScenario, r.location(row.path), ""}});
    }
  }
  r.finish();
  return s;
}

/// read_scenario_values of a file (relative paths from its folder) or of text named `name`.
template <class O>
ScenarioValues load_scenario_file(std::span<const OptionRow<O>> rows,
                                  const std::filesystem::path& file) {
  return read_scenario_values(rows, io::TomlReader::from_file(file), io::read_file_text(file),
                              file.parent_path());
}
template <class O>
ScenarioValues load_scenario_text(std::span<const OptionRow<O>> rows, std::string_view text,
                                  std::string name, const std::filesystem::path& base_dir) {
  return read_scenario_values(rows, io::TomlReader::from_string(text, std::move(name)),
                              std::string(text), base_dir);
}

/// The one merge: per row, the flag, else the scenario, else the default (O's initial value);
/// every value is converted and validated by its row and its origin recorded. Problems go to
/// `report`, each at its origin.
template <class O>
O resolve_options(std::span<const OptionRow<O>> rows, const ScenarioValues& scenario,
                  const GivenValues& flags, ValidationReport& report) {
  O o;
  o.scenario_file = scenario.file;
  o.scenario_text = scenario.text;
  for (const OptionRow<O>& row : rows) {
    auto given = flags.find(row.path);
    if (given == flags.end()) given = scenario.values.find(row.path);
    if (given == scenario.values.end()) continue;
    o.origins[std::string(row.path)] = given->second.origin;
    std::optional<std::string> problem =
        detail::bound_problem(given->second.value, row.kind, row.max_int);
    if (!problem) problem = row.set(o, given->second.value);
    if (problem) {
      report.error(std::string(row.path), *problem, given->second.origin.where);
    }
  }
  return o;
}

/// A problem about the setting at `path`, at its origin: the scenario's file:line when the
/// scenario set it; otherwise no location, the field staying the path (the command line names
/// the flag instead).
Problem problem_at(const ResolvedOrigins& o, std::string_view path, std::string message);

/// Every problem of `report` on a schema path with no location yet, given the scenario's
/// file:line when the scenario set that setting.
template <class O>
ValidationReport located(std::span<const OptionRow<O>> rows, const O& o,
                         const ValidationReport& report) {
  ValidationReport out;
  for (const Problem& p : report.problems()) {
    const OptionRow<O>* row = find_option(rows, p.field);
    const Problem q = p.where.file.empty() && row != nullptr && row->path == p.field
                          ? problem_at(o, p.field, p.message)
                          : p;
    out.error(q.field, q.message, q.where);
  }
  return out;
}

/// The fields a sweep grid may set (every row), and those holding paths.
template <class O>
io::ScenarioFields scenario_fields(std::span<const OptionRow<O>> rows) {
  io::ScenarioFields f;
  for (const OptionRow<O>& row : rows) {
    f.fields.emplace_back(row.path);
    if (row.path_rule == PathRule::kFile || row.path_rule == PathRule::kFileOrId) {
      f.path_fields.emplace_back(row.path);
    }
  }
  return f;
}

/// The resolved inputs, one entry per row: {"path": {"value": ..., "origin": "default" |
/// "scenario" | "flag", "source": where the default comes from | "file:line" | "--flag"}},
/// stored in results. An unset optional setting has the value null.
template <class O>
nlohmann::ordered_json resolved_inputs_json(std::span<const OptionRow<O>> rows, const O& o) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const OptionRow<O>& row : rows) {
    j[std::string(row.path)] = detail::inputs_entry(row.get(o), o.origin(row.path),
                                                    row.default_source);
  }
  return j;
}

// Setters and getters of rows, by member pointer.

template <auto M>
struct MemberOf;
template <class C, class T, T C::*M>
struct MemberOf<M> {
  using Owner = C;
  using Value = T;
};
template <auto M>
using OwnerOf = typename MemberOf<M>::Owner;

/// A string, integer, boolean or number stored as written.
template <auto M>
std::optional<std::string> set_plain(OwnerOf<M>& o, const RawValue& v) {
  using T = typename MemberOf<M>::Value;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) {
    o.*M = std::holds_alternative<std::int64_t>(v) ? static_cast<double>(std::get<std::int64_t>(v))
                                                   : std::get<double>(v);
  } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
    o.*M = std::get<std::int64_t>(v);
  } else {
    o.*M = std::get<T>(v);
  }
  return std::nullopt;
}
/// An integer > 0 (where 0 stands for "not given, take the default", or into an optional count
/// whose unset value means "no limit").
template <auto M>
std::optional<std::string> set_positive(OwnerOf<M>& o, const RawValue& v) {
  const std::int64_t n = std::get<std::int64_t>(v);
  if (n <= 0) return fmt::format("must be positive, got {}", n);
  o.*M = n;
  return std::nullopt;
}
template <auto M>
RawValue get_plain(const OwnerOf<M>& o) {
  using T = typename MemberOf<M>::Value;
  if constexpr (std::is_same_v<T, std::optional<double>> ||
                std::is_same_v<T, std::optional<std::int64_t>>) {
    return o.*M ? RawValue(*(o.*M)) : RawValue();
  } else {
    return RawValue(o.*M);
  }
}
/// An enum setting: its name through `parse`, else the problem listing `names`.
template <auto M, auto parse, auto names>
std::optional<std::string> set_enum(OwnerOf<M>& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  if (auto e = parse(text)) {
    o.*M = *e;
    return std::nullopt;
  }
  return fmt::format("unknown value '{}'; valid: {}", text, names());
}
template <auto M>
RawValue get_enum(const OwnerOf<M>& o) {
  return RawValue(std::string(to_string(o.*M)));
}

/// Bytes with their unit ("25MiB"), >= `min_bytes`.
std::optional<std::string> parse_bytes_at_least(const RawValue& v, Bytes min_bytes, Bytes& out);
/// The size in the largest binary unit that holds it exactly ("25MiB", "1536KiB", "7B").
std::string exact_bytes_text(Bytes b);
template <auto M, std::int64_t kMin = 1>
std::optional<std::string> set_bytes(OwnerOf<M>& o, const RawValue& v) {
  return parse_bytes_at_least(v, Bytes(kMin), o.*M);
}
template <auto M>
RawValue get_bytes(const OwnerOf<M>& o) {
  return RawValue(exact_bytes_text(o.*M));
}

/// A duration with its unit ("2s", "100ms"), >= 0.
std::optional<std::string> parse_duration_value(const RawValue& v, Duration& out);
/// The duration in the largest unit that holds it exactly ("2s", "1500ms", "7ns").
std::string exact_duration_text(Duration d);
template <auto M>
std::optional<std::string> set_duration(OwnerOf<M>& o, const RawValue& v) {
  Duration d;
  if (auto problem = parse_duration_value(v, d)) return problem;
  o.*M = d;
  return std::nullopt;
}
template <auto M>
RawValue get_duration(const OwnerOf<M>& o) {
  using T = typename MemberOf<M>::Value;
  if constexpr (std::is_same_v<T, std::optional<Duration>>) {
    return o.*M ? RawValue(exact_duration_text(*(o.*M))) : RawValue();
  } else {
    return RawValue(exact_duration_text(o.*M));
  }
}

}  // namespace vramsim::run
